/** A small hand-written corpus with one known question per document (search-quality test and bench seed). */
export const CORPUS: Array<{ title: string; text: string; query: string }> = [
  {
    title: 'Parental leave policy',
    text: 'Employees who become parents through birth or adoption receive sixteen weeks of fully paid leave. Leave can be split into two blocks within the first year.',
    query: 'how many weeks of paid leave do new parents get',
  },
  {
    title: 'Expense reimbursement',
    text: 'Submit receipts for travel, meals and lodging within thirty days. Reimbursements are paid with the next payroll run after a manager approves the claim.',
    query: 'reimburse my travel receipts',
  },
  {
    title: 'VPN setup',
    text: 'To reach internal systems from home, install the WireGuard client and import the configuration profile from the IT portal. Connect before opening the wiki.',
    query: 'connect to the vpn from home',
  },
  {
    title: 'Password rotation',
    text: 'Passwords expire every ninety days. Change your password from the account page and choose a long passphrase rather than a short complex word.',
    query: 'how often do I have to change my password',
  },
  {
    title: 'Office plant care',
    text: 'The ferns by the windows are watered on Mondays and Thursdays. Succulents need water only once a month; never leave water standing in the saucers.',
    query: 'when are the ferns watered',
  },
  {
    title: 'Incident response',
    text: 'When production is down, page the on-call engineer, open an incident channel and post status updates every thirty minutes until the outage is resolved.',
    query: 'production outage who do I page',
  },
  {
    title: 'Coffee machine descaling',
    text: 'Descale the espresso machine every two weeks with the citric acid sachets stored under the sink. Run two empty cycles afterwards to rinse.',
    query: 'descale espresso machine',
  },
  {
    title: 'Quarterly planning',
    text: 'Each team drafts objectives two weeks before the quarter starts. Drafts are reviewed in the planning offsite and finalised by the first Monday of the quarter.',
    query: 'when are quarterly objectives drafted',
  },
  {
    title: 'Security badge replacement',
    text: 'A lost badge must be reported to reception the same day. Replacement badges cost ten euros and are printed within one business day.',
    query: 'I lost my badge',
  },
  {
    title: 'Remote work equipment',
    text: 'Remote employees may claim a one-time stipend of five hundred euros for a desk, chair and monitor. Keep the invoices for the reimbursement claim.',
    query: 'stipend for a desk and monitor at home',
  },
  {
    title: 'Code review guidelines',
    text: 'Every pull request needs one approving review. Reviewers check tests, naming and error handling, and respond within one working day.',
    query: 'pull request approval rules',
  },
  {
    title: 'Fire evacuation',
    text: 'When the alarm sounds, leave by the nearest stairwell, never the elevators, and gather at the assembly point in the north parking lot.',
    query: 'where do we gather during a fire alarm',
  },
];
