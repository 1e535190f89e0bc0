import { z } from 'zod';

/** CR, LF or NUL would let a value start a new header line (header injection): refused at the edge. */
const noHeaderBreaks = (field: string) => (v: string) =>
  !/[\r\n\0]/.test(v) || `${field} must not contain CR, LF or NUL characters`;

export const EmailSendBody = z
  .object({
    to: z
      .string()
      .max(320)
      .refine((v) => noHeaderBreaks('to')(v) === true, {
        message: 'to must not contain CR, LF or NUL characters',
        abort: true,
      })
      .pipe(z.email({ message: 'to must be one email address (one recipient per email)' }))
      .describe('One recipient address.'),
    subject: z
      .string()
      .min(1)
      .max(998)
      .refine((v) => noHeaderBreaks('subject')(v) === true, {
        message: 'subject must not contain CR, LF or NUL characters',
      }),
    body: z.string().min(1).max(500_000).describe('Plain text; also the text alternative when html is given.'),
    html: z.string().min(1).max(500_000).optional().describe('HTML version, sent as multipart/alternative with body.'),
  })
  .strict()
  .meta({ id: 'EmailSend' });

export const EmailView = z
  .object({
    id: z.string(),
    object: z.literal('email'),
    status: z
      .enum(['queued', 'sending', 'sent', 'failed', 'uncertain'])
      .describe(
        'queued/sending: in progress; sent: the server accepted it; failed: refused (5xx) or retries exhausted; uncertain: the connection dropped after the message was sent, delivery unknown.',
      ),
    to: z.string(),
    subject: z.string(),
    message_id: z.string().describe('Stable Message-ID header of this email (the same on every attempt).'),
    attempts: z.number().int(),
    smtp_response: z.string().nullable().describe("The SMTP server's last reply, when there was one."),
    error: z.string().nullable(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .meta({ id: 'Email' });
