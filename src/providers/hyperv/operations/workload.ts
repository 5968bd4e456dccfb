// The workload step: diskspd in the VM, run by the composition's workload endpoint (index.ts); the provider applies nothing.
import { workloadStepSchema } from '../../guest.ts';
import { hypervOperation } from '../host.ts';

export const diskspd = hypervOperation({ name: 'diskspd', schema: workloadStepSchema, estimateSec: () => 0 });
