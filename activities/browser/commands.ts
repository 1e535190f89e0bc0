import { ApplicationFailure } from '@temporalio/common';
import { errors as pwErrors, type Locator } from 'playwright-core';
import type { BrowserCommand, BrowserCommandResult } from '../../workflows/browser-defs';
import { resolveGuarded, type GuardPolicy } from './guard-proxy';
import type { LiveSession } from './host';
import { lineDiff, snapshotView, takeSnapshot } from './snapshot';

type Action = Extract<BrowserCommand, { op: 'action' }>;
type Open = Extract<BrowserCommand, { op: 'open' }>;

export function fail(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}

const STALE_HINT = 'Take a fresh snapshot (GET /v1/browser/snapshot) and use its refs.';

/**
 * Maps a Playwright error to a typed failure the API turns into a status.
 * Only the first line of Playwright's message: its call log can be long.
 */
export function mapError(err: unknown, what: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const msg = ((err as Error)?.message ?? String(err)).split('\n')[0].slice(0, 500);
  if (err instanceof pwErrors.TimeoutError) return fail('ActionTimeout', `${what} timed out: ${msg}`);
  if (/net::ERR_TUNNEL_CONNECTION_FAILED|net::ERR_/.test(msg))
    return fail('NavigationFailed', `${what} failed: ${msg}`);
  if (/strict mode violation/.test(msg))
    return fail('BadInput', `${what}: the selector matches several elements (${msg}).`);
  // The caller's selector or key, not the browser: 400 saying which (these came back as 502).
  if (
    /while parsing (css )?selector|InvalidSelectorError|is not a valid XPath expression|Selector cannot start/.test(msg)
  )
    return fail('BadInput', `${what}: the selector does not parse (${msg}).`);
  if (/Unknown key: /.test(msg))
    return fail(
      'BadInput',
      `${what}: ${msg.replace(/^.*?(Unknown key: )/, '$1')}; use key names such as Enter, Tab, ArrowDown, Control+A.`,
    );
  if (/not a (select|checkbox|input)|Element is not|Cannot type|Error: Element/i.test(msg))
    return fail('BadInput', `${what}: ${msg}`);
  return fail('BrowserError', `${what} failed: ${msg}`);
}

/**
 * Checks an URL the way the guard proxy will, so a refused navigation answers with the reason
 * instead of Chromium's generic error page.
 */
export async function checkNavigation(url: string, policy: GuardPolicy): Promise<void> {
  try {
    await resolveGuarded(url, policy);
  } catch (err) {
    throw fail('Refused', `Refused to open ${url.slice(0, 200)}: ${(err as Error).message}.`);
  }
}

async function open(live: LiveSession, cmd: Open, policy: GuardPolicy): Promise<Record<string, unknown>> {
  await checkNavigation(cmd.url, policy);
  live.proxy.takeRefused();
  let status: number | null = null;
  try {
    const res = await live.page.goto(cmd.url, { waitUntil: cmd.waitUntil, timeout: cmd.timeoutMs });
    status = res?.status() ?? null;
    if (res?.headers()['x-svc-refused'])
      throw fail('Refused', `Refused to open ${cmd.url.slice(0, 200)}: the fetch guard refused it.`);
  } catch (err) {
    throw mapError(err, `Opening ${cmd.url.slice(0, 200)}`);
  }
  return { status, blocked: live.proxy.takeRefused() };
}

/** The element an action targets: a ref from the last snapshot (checked for staleness) or a selector. */
async function target(live: LiveSession, cmd: Action): Promise<Locator | undefined> {
  if (cmd.ref) {
    const stale = !live.refs.has(cmd.ref) || live.snapshotNav !== live.navigations;
    const loc = live.page.locator(`aria-ref=${cmd.ref}`);
    if (stale || (await loc.count().catch(() => 0)) === 0) {
      throw fail(
        'StaleRef',
        `The ref ${cmd.ref} is not on the page any more (the page changed since the last snapshot). ${STALE_HINT}`,
      );
    }
    return loc;
  }
  if (cmd.selector) return live.page.locator(cmd.selector).first();
  return undefined;
}

function need<T>(v: T | undefined, field: string, action: string): T {
  if (v === undefined) throw fail('BadInput', `body.${field}: required for the ${action} action.`);
  return v;
}

async function act(live: LiveSession, cmd: Action): Promise<void> {
  const page = live.page;
  const t = { timeout: cmd.timeoutMs };
  const el = await target(live, cmd);
  const needsEl = (): Locator => need(el, 'ref', cmd.action);
  switch (cmd.action) {
    case 'click':
      return needsEl().click(t);
    case 'fill':
      return needsEl().fill(need(cmd.text, 'text', 'fill'), t);
    case 'type':
      return needsEl().pressSequentially(need(cmd.text, 'text', 'type'), t);
    case 'press': {
      const key = need(cmd.key, 'key', 'press');
      return el ? el.press(key, t) : page.keyboard.press(key);
    }
    case 'select':
      await needsEl().selectOption(need(cmd.values, 'values', 'select'), t);
      return;
    case 'check':
      return needsEl().check(t);
    case 'uncheck':
      return needsEl().uncheck(t);
    case 'hover':
      return needsEl().hover(t);
    case 'scroll':
      if (el) return el.scrollIntoViewIfNeeded(t);
      return page.mouse.wheel(0, cmd.amount ?? 600);
    case 'wait_for':
      if (el) return el.waitFor({ state: 'visible', ...t });
      if (cmd.text)
        return page
          .getByText(cmd.text)
          .first()
          .waitFor({ state: 'visible', ...t });
      return page.waitForLoadState('load', t);
    case 'back':
      await page.goBack({ timeout: cmd.timeoutMs });
      return;
    case 'forward':
      await page.goForward({ timeout: cmd.timeoutMs });
      return;
    case 'reload':
      await page.reload({ timeout: cmd.timeoutMs });
      return;
  }
}

/** Runs one command on a live session. State commands are handled by the caller (they need the database). */
export async function runCommand(
  live: LiveSession,
  cmd: BrowserCommand,
  policy: GuardPolicy,
): Promise<BrowserCommandResult> {
  const page = live.page;
  const base = async (): Promise<BrowserCommandResult> => ({
    url: page.url(),
    title: await page.title().catch(() => ''),
  });
  switch (cmd.op) {
    case 'open': {
      const extra = await open(live, cmd, policy);
      return { ...(await base()), ...extra };
    }
    case 'snapshot': {
      // The title is read while the snapshot is taken: two requests to the page in flight, one wait.
      const [view, head] = await Promise.all([
        snapshotView(live, cmd).catch((err) => Promise.reject(mapError(err, 'The snapshot'))),
        base(),
      ]);
      if ('missingRef' in view)
        throw fail('StaleRef', `The ref ${view.missingRef} is not in the current snapshot. ${STALE_HINT}`);
      const { refs, ...rest } = view;
      return { ...head, ...rest, refs };
    }
    case 'action': {
      const before = live.lastSnapshot;
      live.proxy.takeRefused();
      try {
        await act(live, cmd);
      } catch (err) {
        throw mapError(err, `The ${cmd.action} action`);
      }
      const [head, snap] = await Promise.all([
        base(),
        cmd.snapshotDiff ? takeSnapshot(live).catch((err) => Promise.reject(mapError(err, 'The snapshot'))) : undefined,
      ]);
      const out: BrowserCommandResult = { ...head, ok: true, blocked: live.proxy.takeRefused() };
      if (snap) {
        out.snapshot_diff = lineDiff(before, snap.full);
        out.refs = [...live.refs];
      }
      return out;
    }
    case 'screenshot': {
      let el: Locator | undefined;
      if (cmd.ref)
        el = await target(live, {
          op: 'action',
          action: 'hover',
          ref: cmd.ref,
          timeoutMs: 10_000,
          snapshotDiff: false,
        });
      const opts = {
        type: cmd.format,
        quality: cmd.format === 'jpeg' ? (cmd.quality ?? 80) : undefined,
        timeout: 30_000,
      } as const;
      try {
        const buf = el ? await el.screenshot(opts) : await page.screenshot({ ...opts, fullPage: cmd.fullPage });
        return { ...(await base()), format: cmd.format, bytes: buf.length, data: buf.toString('base64') };
      } catch (err) {
        throw mapError(err, 'The screenshot');
      }
    }
    default:
      throw fail('BadInput', `Unknown command ${(cmd as { op: string }).op}.`);
  }
}
