import pino, { type Logger } from 'pino';
import type { Config } from '../schema/config';

/** Structured JSON logs. Authorization headers and key material are redacted wherever they appear. */
export function createLogger(config: Pick<Config, 'logLevel'>, name = 'svc'): Logger {
  return pino({
    name,
    level: config.logLevel,
    redact: {
      paths: ['*.authorization', '*.Authorization', '*.api_key', '*.apiKey', '*.secret', '*.password', '*.token', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
