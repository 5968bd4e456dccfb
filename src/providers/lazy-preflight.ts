// A target's preflight whose checks load on first use: `validate`, `plan` and a run that never asks
// them do not load the checks' modules (issue 31: modules a command does not use are not loaded;
// decision 0086). `spaceNeeds` is pure and small, so it is given as is.
import type { TargetPreflight } from '../contract/preflight.ts';

/** The preflight `load` builds, loaded when `spaceOf` or `checks` is first called. */
export function lazyPreflight(spaceNeeds: TargetPreflight['spaceNeeds'], load: () => Promise<TargetPreflight>): TargetPreflight {
  let loaded: Promise<TargetPreflight> | undefined;
  const get = (): Promise<TargetPreflight> => (loaded ??= load());
  return {
    spaceNeeds,
    spaceOf: async (places, o) => (await get()).spaceOf(places, o),
    checks: async (steps) => {
      const p = await get();
      return p.checks ? p.checks(steps) : [];
    },
  };
}
