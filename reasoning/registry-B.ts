import type { ReasoningEndpoint } from './types';
import { workflowGrammarCompile } from './workflow-grammar-compile';
import { actionsPlan } from './actions-plan';
import { executionOrchestrate } from './execution-orchestrate';
import { workgraphCompile } from './workgraph-compile';
import { workgraphAnswer } from './workgraph-answer';
import { codebaseTaskPlan } from './codebase-task-plan';
import { contextualActionPlan } from './contextual-action-plan';
import { resourcesCommitmentReason } from './resources-commitment-reason';

/** Group B structured-reasoning endpoints: workflow, action and work-graph planners. */
export const endpointsB: ReasoningEndpoint[] = [
  workflowGrammarCompile as unknown as ReasoningEndpoint,
  actionsPlan as unknown as ReasoningEndpoint,
  executionOrchestrate as unknown as ReasoningEndpoint,
  workgraphCompile as unknown as ReasoningEndpoint,
  workgraphAnswer as unknown as ReasoningEndpoint,
  codebaseTaskPlan as unknown as ReasoningEndpoint,
  contextualActionPlan as unknown as ReasoningEndpoint,
  resourcesCommitmentReason as unknown as ReasoningEndpoint,
];
