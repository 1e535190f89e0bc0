import type { ReasoningEndpoint } from './types';
import { conversationHarvest } from './conversation-harvest';
import { temporalCoordinate } from './temporal-coordinate';
import { ambientContinuityCompile } from './ambient-continuity-compile';
import { ambientIntentSuggest } from './ambient-intent-suggest';
import { continuityRecover } from './continuity-recover';
import { signalsOpportunities } from './signals-opportunities';
import { intentTimeline } from './intent-timeline';

/** Group C: conversation, time, continuity, ambient-intent, signal and intent-timeline compilers. */
export const endpointsC: ReasoningEndpoint[] = [
  conversationHarvest as unknown as ReasoningEndpoint,
  temporalCoordinate as unknown as ReasoningEndpoint,
  ambientContinuityCompile as unknown as ReasoningEndpoint,
  ambientIntentSuggest as unknown as ReasoningEndpoint,
  continuityRecover as unknown as ReasoningEndpoint,
  signalsOpportunities as unknown as ReasoningEndpoint,
  intentTimeline as unknown as ReasoningEndpoint,
];
