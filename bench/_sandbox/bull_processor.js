// The no-op processor of bench/sandbox.ts (BullMQ's sandboxed Worker: the default export).
export default async function () {}
