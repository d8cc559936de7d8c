// npm run apikey: the operators' command (scripts/commands/apikey.ts) as a process.
import { runCommand } from './commands/command';
import { apikey } from './commands/apikey';

runCommand(apikey);
