// A BullMQ sandboxed processor (tests/bullmq/backend.test.ts): runs in a child process BullMQ forks.
module.exports = async (job) => {
  await job.updateProgress(7);
  await job.log(`sandboxed ${job.id}`);
  return job.data.v * 3;
};
