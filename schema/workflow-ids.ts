/**
 * Every workflow id and event-stream name, built in one place. Ids are meaningful (`<noun>-<record
 * id>`), so a record has at most one workflow and an operator finds it by the record's id; streams
 * are `<noun>:<record id>`. Pure functions: the API, the activities and the workflow bundle use them.
 */
export const workflowIds = {
  task: (taskId: string) => `task-${taskId}`,
  goal: (goalId: string) => `goal-${goalId}`,
  sovereign: (goalId: string) => `sovereign-${goalId}`,
  pad: (sessionId: string) => `pad-${sessionId}`,
  swarm: (runId: string) => `swarm-${runId}`,
  learn: (jobId: string) => `learn-${jobId}`,
  agent: (runId: string) => `agent-${runId}`,
  plan: (runId: string) => `plan-${runId}`,
  research: (jobId: string) => `research-${jobId}`,
  email: (emailId: string) => `email-${emailId}`,
  browser: (sessionId: string) => `browser-${sessionId}`,
} as const;

export const streams = {
  task: (taskId: string) => `task:${taskId}`,
  goal: (goalId: string) => `goal:${goalId}`,
  pad: (sessionId: string) => `pad:${sessionId}`,
  swarm: (runId: string) => `swarm:${runId}`,
  agent: (runId: string) => `agent:${runId}`,
  plan: (runId: string) => `plan:${runId}`,
  research: (jobId: string) => `research:${jobId}`,
} as const;
