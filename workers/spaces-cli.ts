import { runAsProcess } from './cli';
import { runSpacesCli } from './spaces-command';

runAsProcess(runSpacesCli);
