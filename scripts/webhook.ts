// npm run webhook: the operators' command (scripts/commands/webhook.ts) as a process.
import { runCommand } from './commands/command';
import { webhook } from './commands/webhook';

runCommand(webhook);
