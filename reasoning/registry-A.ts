import type { ReasoningEndpoint } from './types';
import { learningMasteryCompile } from './learning-mastery-compile';
import { questScaffold } from './quest-scaffold';
import { behaviorCreate } from './behavior-create';
import { contextMomentum } from './context-momentum';
import { procedureCompile } from './procedure-compile';
import { proceduralCrystallize } from './procedural-crystallize';
import { memorySemanticGraph } from './memory-semantic-graph';
import { anticipationPrepare } from './anticipation-prepare';

/** Group A structured-reasoning endpoints: learning, quests, behaviours, momentum, procedures, memory, anticipation. */
export const endpointsA: ReasoningEndpoint[] = [
  learningMasteryCompile as unknown as ReasoningEndpoint,
  questScaffold as unknown as ReasoningEndpoint,
  behaviorCreate as unknown as ReasoningEndpoint,
  contextMomentum as unknown as ReasoningEndpoint,
  procedureCompile as unknown as ReasoningEndpoint,
  proceduralCrystallize as unknown as ReasoningEndpoint,
  memorySemanticGraph as unknown as ReasoningEndpoint,
  anticipationPrepare as unknown as ReasoningEndpoint,
];
