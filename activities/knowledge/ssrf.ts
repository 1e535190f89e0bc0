import { AppError } from '../../schema/errors';
import {
  checkUrl as checkUrlWith,
  guardedLookup as guardedLookupWith,
  type PrivateFetchPolicy,
  type UrlRefusal,
} from '../net/ssrf';

export { isPrivateAddress } from '../net/ssrf';

// Knowledge ingestion's wording of the shared SSRF guard: every refusal is an `invalid_request`.

export function refused(host: string): AppError {
  return new AppError(
    'invalid_request',
    `Refused to fetch ${host}: it resolves to a private, loopback or otherwise non-public address.`,
  );
}

/**
 * The shared guarded `lookup`. A refusal is a plain error with `code: 'ESSRF'` (the socket layer
 * reports it as a network error); the fetch maps it back to `invalid_request`.
 */
export function guardedLookup(allowPrivate: PrivateFetchPolicy) {
  return guardedLookupWith(allowPrivate, (hostname) =>
    Object.assign(new Error(refused(hostname).message), { code: 'ESSRF' }),
  );
}

function refusal(r: UrlRefusal): AppError {
  switch (r.reason) {
    case 'invalid':
      return new AppError('invalid_request', `Not a valid URL: ${r.raw.slice(0, 200)}`);
    case 'scheme':
      return new AppError('invalid_request', 'Only http and https URLs can be fetched.');
    case 'credentials':
      return new AppError('invalid_request', 'URLs with credentials are refused.');
    default:
      return refused(r.host);
  }
}

/**
 * Checks a URL before any connection: http(s) only, no credentials, and an IP literal host must be
 * public (literals skip `lookup`); local names are refused too. @throws AppError invalid_request
 */
export function checkUrl(raw: string, allowPrivate: PrivateFetchPolicy): URL {
  return checkUrlWith(raw, { allowPrivate, refuseLocalNames: true, makeError: refusal });
}
