import { DateTime, Duration, IANAZone } from 'luxon';
import { z } from 'zod';
import { defineTool } from './types';

const zone = z
  .string()
  .max(64)
  .refine((z) => IANAZone.isValidZone(z), 'not an IANA time zone')
  .optional();

function parse(value: string, tz?: string): DateTime {
  const dt = DateTime.fromISO(value, { zone: tz ?? 'utc', setZone: true });
  if (!dt.isValid) throw new Error(`'${value}' is not an ISO 8601 date-time`);
  return dt;
}

export const datetime = defineTool({
  name: 'datetime',
  description:
    'Dates and times: now (in a zone), convert between zones, difference between two instants, add a duration.',
  input: z.discriminatedUnion('op', [
    z.object({ op: z.literal('now'), timezone: zone }),
    z.object({ op: z.literal('convert'), value: z.string().max(64), timezone: zone.unwrap() }),
    z.object({
      op: z.literal('diff'),
      from: z.string().max(64),
      to: z.string().max(64),
      unit: z.enum(['seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years']).default('days'),
    }),
    z.object({
      op: z.literal('add'),
      value: z.string().max(64),
      duration: z.string().max(64).describe('ISO 8601 duration, e.g. P1DT2H'),
      timezone: zone,
    }),
  ]),
  run(args) {
    switch (args.op) {
      case 'now': {
        const dt = DateTime.now().setZone(args.timezone ?? 'utc');
        return { iso: dt.toISO(), weekday: dt.toFormat('cccc'), timezone: dt.zoneName };
      }
      case 'convert':
        return { iso: parse(args.value).setZone(args.timezone).toISO() };
      case 'diff':
        return { [args.unit]: parse(args.to).diff(parse(args.from), args.unit).as(args.unit) };
      case 'add': {
        const d = Duration.fromISO(args.duration);
        if (!d.isValid) throw new Error(`'${args.duration}' is not an ISO 8601 duration`);
        return { iso: parse(args.value, args.timezone).plus(d).toISO() };
      }
    }
  },
});
