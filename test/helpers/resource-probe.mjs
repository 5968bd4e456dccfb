// Preloaded into a CLI run (`node --import <this> bin/storsweep.mjs …`) by tests that hold a command
// to a memory/CPU budget: at exit it writes the process's own resource usage (peak RSS in KiB, CPU
// time in µs; process.resourceUsage) as JSON to the file named by STORSWEEP_TEST_RUSAGE_FILE. It
// measures the process from the inside, so it needs no /usr/bin/time and counts no other process.
import fs from 'node:fs';

const file = process.env.STORSWEEP_TEST_RUSAGE_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    fs.writeFileSync(file, JSON.stringify({ maxRssKiB: u.maxRSS, cpuUs: u.userCPUTime + u.systemCPUTime }));
  });
}
