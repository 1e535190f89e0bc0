import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

// Shared by the session workflow, the browser activities and the API (types and definitions only).

export const BROWSER_ACTIONS = [
  'click',
  'fill',
  'type',
  'press',
  'select',
  'check',
  'uncheck',
  'hover',
  'scroll',
  'wait_for',
  'back',
  'forward',
  'reload',
] as const;
export type BrowserActionName = (typeof BROWSER_ACTIONS)[number];
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle' | 'commit';

export type BrowserCommand =
  | { op: 'open'; url: string; waitUntil: WaitUntil; timeoutMs: number }
  | { op: 'snapshot'; ref?: string; depth?: number; maxChars: number; diff: boolean }
  | {
      op: 'action';
      action: BrowserActionName;
      ref?: string;
      selector?: string;
      text?: string;
      key?: string;
      values?: string[];
      amount?: number;
      timeoutMs: number;
      snapshotDiff: boolean;
    }
  | { op: 'screenshot'; fullPage: boolean; ref?: string; format: 'png' | 'jpeg'; quality?: number }
  | { op: 'state-save'; name: string }
  | { op: 'state-load'; stateId: string }
  | { op: 'close' };

export type BrowserSessionStatus = 'opening' | 'open' | 'recovering' | 'closed' | 'expired' | 'failed';

export interface BrowserSessionState {
  sessionId: string;
  tenantId: string;
  status: BrowserSessionStatus;
  workerId: string | null;
  /** The owning worker's own task queue: every command's activity runs there. */
  queue: string | null;
  url: string | null;
  title: string | null;
  /** Refs of the last snapshot (capped), so operators can see what an agent could act on. */
  refs: string[];
  idleTimeoutS: number;
  expiresAt: number | null;
  recoveries: number;
  error: string | null;
}

export interface BrowserSessionInput {
  state: BrowserSessionState;
  options: Record<string, unknown>;
  /** The shared queue every browser worker polls for new sessions and recoveries. */
  browserQueue: string;
  /** A saved state to open the session with. */
  initialStateId?: string;
  /** Seconds between owner liveness checks while no command runs (0 or absent: none). */
  heartbeatS?: number;
}

/** What the owning worker answers for a command; `refs` is consumed by the workflow. */
export interface BrowserCommandResult {
  url: string;
  title: string;
  refs?: string[];
  [k: string]: unknown;
}

/** What the owner tells the session workflow after commands that reached it directly (not through the workflow). */
export interface BrowserTouch {
  url: string;
  title: string;
  refs: string[];
  /** Milliseconds since the last command ended (the idle deadline counts from then). */
  idleMs: number;
}

/** The owner's answer to a liveness check: whether a command runs now and how long the session has been idle. */
export interface PingResult {
  busy: boolean;
  idleMs: number;
}

/** The path of a browser worker's command endpoint (workers/browser-direct.ts) and its answer. */
export const BROWSER_DIRECT_PATH = '/browser/command';
export type BrowserDirectAnswer =
  { ok: true; result: BrowserCommandResult } | { ok: false; type: string; message: string };

export const browserStateQuery = defineQuery<BrowserSessionState>('browserState');
export const browserAwaitOpenUpdate = defineUpdate<BrowserSessionState>('browserAwaitOpen');
export const browserCommandUpdate = defineUpdate<BrowserCommandResult, [BrowserCommand]>('browserCommand');
export const browserTouchedSignal = defineSignal<[BrowserTouch]>('browserTouched');

export function isEndedStatus(s: BrowserSessionStatus): boolean {
  return s === 'closed' || s === 'expired' || s === 'failed';
}
