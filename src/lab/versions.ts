// The releases `npm run lab -- up --version <v>` simulates, for the ESXi stand-ins' host model
// (src/lab/harness/esxi/state.ts). The vcsim harness has the same table (harness/vcsim/version.go):
// the version it reports and the GA build of that ESXi release.
export const LAB_VERSIONS = {
  '5.5': { version: '5.5.0', build: '1331820' },
  '6.7': { version: '6.7.0', build: '8169922' },
  '7.0': { version: '7.0.0', build: '15843807' },
  '8.0': { version: '8.0.0', build: '20513097' },
} as const;

export type LabVersion = keyof typeof LAB_VERSIONS;
export const DEFAULT_LAB_VERSION: LabVersion = '8.0';
export const isLabVersion = (v: unknown): v is LabVersion => typeof v === 'string' && Object.hasOwn(LAB_VERSIONS, v);
