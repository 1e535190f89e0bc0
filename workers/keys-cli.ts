import { runAsProcess } from './cli';
import { runKeysCli } from './keys-command';

runAsProcess(runKeysCli);
