/** The no-op processor of bench/sandbox.ts (EchoMQ's sandboxes: the default export). */
export default function (): void {}
