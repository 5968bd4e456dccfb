import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start real servers (sshd, vcsim); keep them from fighting over 2 cores.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
