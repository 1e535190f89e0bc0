import { DateTime, IANAZone } from 'luxon';

/** Validity of zone names already checked (IANAZone.isValidZone is costly, see resolveZone). */
const validZones = new Map<string, boolean>();

/**
 * Time parsing for the compilers. Everything goes through luxon with an explicit zone so the
 * result never depends on the machine's local time zone: strings without an offset are read in
 * the caller's `timezone` (an IANA name) or UTC; strings with an offset keep it, then are
 * shifted into `timezone` when one is given.
 */
export function resolveZone(timezone?: string | null): string | undefined {
  if (!timezone) return undefined;
  let valid = validZones.get(timezone);
  if (valid === undefined) {
    // IANAZone.isValidZone builds a fresh Intl.DateTimeFormat on every call; the answer for a
    // given name never changes, so remember it (bounded: request-supplied names).
    valid = IANAZone.isValidZone(timezone);
    if (validZones.size >= 1000) validZones.clear();
    validZones.set(timezone, valid);
  }
  return valid ? timezone : undefined;
}

export function parseInstant(value: string | null | undefined, timezone?: string): DateTime | null {
  if (!value) return null;
  const zone = resolveZone(timezone);
  const dt = DateTime.fromISO(value.trim(), { zone: zone ?? 'utc', setZone: true });
  if (!dt.isValid) return null;
  return zone ? dt.setZone(zone) : dt;
}

/** ISO string without milliseconds; keeps the offset of `dt`. */
export function isoOut(dt: DateTime): string {
  return dt.toISO({ suppressMilliseconds: true }) ?? dt.toUTC().toISO()!;
}
