import { defineConfig } from 'vitest/config';

// Test files that need the machine to themselves (run one at a time, after the parallel group):
// each line says why. Every other integration file runs beside another, with its own lab (temp
// directories, ports picked by the kernel, its own simulator, sshd, stand-in state and guest user).
export const SERIAL_FILES: Record<string, string> = {
  // hands a recycled pid to another process through /proc/sys/kernel/ns_last_pid: any process
  // another file starts at that moment could take the pid instead
  'test/integration/esxtop-ownership.test.ts': 'pid reuse via ns_last_pid is machine-wide',
};

const serial = Object.keys(SERIAL_FILES);
// builds the vcsim harness once before any integration file starts a simulator
const BUILD_ONCE = 'test/helpers/global-setup.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // the CI machine has 2 cores; integration files mostly wait on servers, fio and child processes
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], exclude: serial, globalSetup: [BUILD_ONCE] } },
      { extends: true, test: { name: 'serial', include: serial.length ? serial : ['test/serial-none/**'], globalSetup: [BUILD_ONCE], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
