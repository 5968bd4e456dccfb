// What a workload is, independent of the tool that runs it. Profiles (CrystalDiskMark-equivalent,
// IOMeter access specs, custom) are lists of these tests plus how passes are run and aggregated.
// The shapes live in the contract (src/contract/workload.ts), which every layer may name.
export type { Aggregation, PrefillOutcome, WorkloadProfile, WorkloadTest } from '../contract/workload.ts';
