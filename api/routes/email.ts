import { z } from 'zod';
import { deleteEmailRow, getEmailRow, insertEmailWithinRate, type EmailRow } from '../../activities/store/emails';
import { jobIdFor } from '../idempotency';
import { messageIdFor } from '../../activities/email/transport';
import { EmailSendBody, EmailView } from '../../schema/email';
import { AppError, notFound } from '../../schema/errors';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { startJobWorkflow } from '../start-workflow';
import { workflowIds } from '../../schema/workflow-ids';

const IdParams = z.object({ id: z.string().min(1).max(100) });

function emailView(r: EmailRow): z.infer<typeof EmailView> {
  return {
    id: r.id,
    object: 'email',
    status: r.status,
    to: r.to_addr,
    subject: r.subject,
    message_id: r.message_id,
    attempts: r.attempts,
    smtp_response: r.smtp_response,
    error: r.error,
    created_at: r.created_at,
    sent_at: r.sent_at,
  };
}

/** Stores the email (within the tenant's rate) and starts `email-<id>`; nothing stays stored when the start fails. */
export async function queueEmail(ctx: AppContext, body: z.infer<typeof EmailSendBody>) {
  const { smtpUrl, from, ratePerMinute } = ctx.deps.config.email;
  if (!smtpUrl || !from) {
    throw new AppError(
      'service_unavailable',
      'Email is not configured: set SVC_SMTP_URL (smtp://user:pass@host:port or smtps://...) and SVC_SMTP_FROM (the From address) on the API and the worker.',
    );
  }
  const tenantId = principalOf(ctx).tenantId;
  const id = jobIdFor(ctx, 'email');
  const queued = await insertEmailWithinRate(
    ctx.deps.db,
    {
      id,
      tenantId,
      to: body.to,
      subject: body.subject,
      body: body.body,
      html: body.html ?? null,
      from,
      messageId: messageIdFor(id, from),
    },
    ratePerMinute,
  );
  if ('retryAfter' in queued) {
    throw new AppError(
      'rate_limited',
      `Email send rate exceeded (${ratePerMinute} per minute per tenant); retry after ${queued.retryAfter} s.`,
      {
        headers: { 'Retry-After': String(queued.retryAfter) },
      },
    );
  }
  await startJobWorkflow(ctx, {
    workflow: 'emailWorkflow',
    workflowId: workflowIds.email(id),
    kind: 'email',
    tenantId,
    title: `Email: ${body.subject.slice(0, 80)}`,
    args: [{ tenantId, emailId: id }],
    onStartFailed: () => deleteEmailRow(ctx.deps.db, tenantId, id),
  });
  return emailView(queued.row);
}

export function emailRoutes(): RouteSpec[] {
  const scope = { scope: 'runtime:email:send' } as const;
  return [
    defineRoute({
      method: 'post',
      path: '/v1/email/send',
      access: scope,
      tags: ['email'],
      body: EmailSendBody,
      response: EmailView,
      idempotent: true,
      summary:
        'Queue one email to one recipient: workflow email-<id> delivers it through the SMTP pool (transient failures retried). Exactly once per Idempotency-Key.',
      responses: {
        429: 'Per-tenant send rate exceeded (Retry-After)',
        503: 'Email not configured or workflow service unavailable',
      },
      example: {
        to: 'ada@example.com',
        subject: 'Your report',
        body: 'The report is ready.',
        html: '<p>The report is <b>ready</b>.</p>',
      },
      handler: (ctx: AppContext, { body }) => queueEmail(ctx, body),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/email/:id',
      access: scope,
      tags: ['email'],
      params: IdParams,
      response: EmailView,
      summary: 'Delivery status of an email.',
      handler: async (ctx: AppContext, { params }) => {
        const row = await getEmailRow(ctx.deps.db, principalOf(ctx).tenantId, params.id);
        if (!row) throw notFound(`Email ${params.id}`);
        return emailView(row);
      },
    }),
  ];
}
