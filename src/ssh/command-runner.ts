// One interface for "run a command line somewhere": its shapes are the contract's
// (src/contract/command-runner.ts), named here too for the runners and their many callers.
export type { CommandResult, CommandRunner, RunOptions } from '../contract/command-runner.ts';
