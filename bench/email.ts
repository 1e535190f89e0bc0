/**
 * Email benchmark, same run, interleaved, against one local SMTP server (npm smtp-server):
 *  - API: POST /v1/email/send → workflow email-<id> → activity → pooled nodemailer → the server
 *    has stored the message (end to end, what a caller waits for);
 *  - direct: nodemailer with an SMTP pool, sendMail to the same server (the floor);
 *  - workflow: a trivial workflow with one activity (smokeWorkflow) started and awaited: the
 *    fixed cost of making a send durable.
 * PASS when API p50 ≤ 1.3 × direct p50 + workflow p50. Exits non-zero on FAIL.
 * Run: npm run -s bench -- email   (SENDS=100 by default)
 */
import nodemailer from 'nodemailer';
import { startSmtpPeer } from '../test/helpers/smtp-peer';
import { fmt, percentile, startBenchStack } from './helpers';

const SENDS = Number(process.env.SENDS ?? 100);
const FROM = 'bench@svc.test';

async function main(): Promise<void> {
  const smtp = await startSmtpPeer();
  const { app, client, taskQueue, close } = await startBenchStack({
    workflowsPath: require.resolve('../workflows'),
    env: { SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: FROM, SVC_EMAIL_RATE_PER_MINUTE: '100000' },
    peers: [smtp],
  });
  const direct = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    maxConnections: 4,
  });
  try {
    const key = await app.key(['runtime:email:send']);
    const api: number[] = [];
    const raw: number[] = [];
    const wf: number[] = [];
    // Warm-up: pools connected, workflow code loaded (not measured).
    for (let i = 0; i < 3; i++) {
      await sendViaApi(app.url, key, `warm ${i}`, smtp.received.bind(smtp));
      await direct.sendMail({ from: FROM, to: 'b@example.com', subject: `warm direct ${i}`, text: 'x' });
      await client.workflow.execute('smokeWorkflow', {
        taskQueue,
        workflowId: `bench-smoke-warm-${i}-${Date.now()}`,
        args: [{ message: 'x' }],
      });
    }
    for (let i = 0; i < SENDS; i++) {
      api.push(await sendViaApi(app.url, key, `api ${i}`, smtp.received.bind(smtp)));
      let t = performance.now();
      await direct.sendMail({
        from: FROM,
        to: 'b@example.com',
        subject: `direct ${i}`,
        text: 'Bench body.',
        html: '<p>Bench body.</p>',
      });
      raw.push(performance.now() - t);
      t = performance.now();
      await client.workflow.execute('smokeWorkflow', {
        taskQueue,
        workflowId: `bench-smoke-${i}-${Date.now()}`,
        args: [{ message: 'x' }],
      });
      wf.push(performance.now() - t);
      if ((i + 1) % 25 === 0) console.error(`… ${i + 1}/${SENDS}`);
    }
    const p50 = { api: percentile(api, 50), raw: percentile(raw, 50), wf: percentile(wf, 50) };
    const bound = 1.3 * p50.raw + p50.wf;
    console.log(
      `## Email: API (workflow + pool) vs nodemailer pool direct (${SENDS} sends each, interleaved, same SMTP server)\n`,
    );
    console.log('| path | p50 ms | p95 ms |');
    console.log('|---|---|---|');
    for (const [name, a] of [
      ['API POST /v1/email/send → stored by server', api],
      ['nodemailer pool direct', raw],
      ['workflow start + 1 activity (smoke)', wf],
    ] as const) {
      console.log(`| ${name} | ${fmt(percentile(a, 50))} | ${fmt(percentile(a, 95))} |`);
    }
    const verdict = p50.api <= bound ? 'PASS' : 'FAIL';
    console.log(
      `\nAPI p50 ${fmt(p50.api)} ms vs bound 1.3 × ${fmt(p50.raw)} + ${fmt(p50.wf)} = ${fmt(bound)} ms (API/direct ${(p50.api / p50.raw).toFixed(2)}×): ${verdict}`,
    );
    if (verdict === 'FAIL') process.exitCode = 1;
  } finally {
    direct.close();
    await close();
    await smtp.close();
  }
}

async function sendViaApi(
  url: string,
  key: string,
  subject: string,
  received: (s: string) => Promise<unknown>,
): Promise<number> {
  const t = performance.now();
  const arrived = received(subject);
  const r = await fetch(`${url}/v1/email/send`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to: 'b@example.com', subject, body: 'Bench body.', html: '<p>Bench body.</p>' }),
  });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`API send answered ${r.status}`);
  await arrived;
  return performance.now() - t;
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exitCode = 1;
});
