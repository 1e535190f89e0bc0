import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { Config } from '../schema/config';

export type LogFormat = 'json' | 'pretty';

/** Pretty when asked, else pretty only for a person at a terminal; JSON for pipes, files and collectors. */
export function chooseLogFormat(format: LogFormat | undefined, isTty: boolean): LogFormat {
  return format ?? (isTty ? 'pretty' : 'json');
}

/**
 * Logs: one coloured line per event on a terminal (`SVC_LOG_FORMAT=pretty`), JSON otherwise
 * (`SVC_LOG_FORMAT=json`). Authorization headers and key material are redacted wherever they appear.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'> & { logFormat?: LogFormat },
  name = 'svc',
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Logger {
  const options: pino.LoggerOptions = {
    name,
    level: config.logLevel,
    redact: {
      paths: [
        '*.authorization',
        '*.Authorization',
        '*.api_key',
        '*.apiKey',
        '*.secret',
        '*.password',
        '*.token',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  };
  if (chooseLogFormat(config.logFormat, out.isTTY === true) === 'json') return pino(options, out);
  // A synchronous stream (no worker thread): lines appear in order with the banner and progress output.
  const pretty = pinoPretty({
    destination: out,
    colorize: out.isTTY === true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    sync: true,
  });
  return pino(options, pretty);
}
