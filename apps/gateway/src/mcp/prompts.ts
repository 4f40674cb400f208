import { gatewayJobs } from '@acg/capabilities';
import { FindCapabilityPromptArguments, mcpToolName, RunJobPromptArguments } from '@acg/schemas';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  type GetPromptResult,
  type Prompt,
  type PromptArgument,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { Services } from '../services.js';
import { CATALOG_RESOURCE_URI, jsonRpcError } from './resources.js';

/**
 * The gateway's MCP prompts (apps/gateway/README.md "MCP"; docs/mcp.md), for `prompts/list` and
 * `prompts/get`:
 * - `find_and_pay_for_capability` (`need`, optional `max_price_usdc`): find a capability for a need
 *   with `search_capabilities`, read its page (`acg://capabilities/{id}`), call its tool and pay the
 *   x402 PaymentRequired within the price limit;
 * - `run_job_for_objective` (`objective`, `budget_usdc`, optional `capabilities`): run a job with
 *   a budget (the `gateway_jobs` tool when this server lists it, else `POST /api/v1/jobs`), poll it
 *   and report its result and proofs. It names the capabilities that accept an objective as input.
 * Arguments are validated with the zod schemas of @acg/schemas (packages/schemas/src/mcp.ts);
 * invalid ones, and an unknown prompt, are JSON-RPC -32602 (invalid params) naming each issue.
 */

/** What a prompt needs besides its arguments: the catalog, the public base URL, and whether a tool is listed. */
export interface PromptContext {
  services: Pick<Services, 'catalog' | 'publicBaseUrl'>;
  hasTool(name: string): boolean;
}

interface PromptDefinition<A extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  args: A;
  text(args: z.output<A>, ctx: PromptContext): string;
}

/** `arguments` of a prompt listing, from its zod object: name, description, required unless optional. */
function promptArguments(schema: z.ZodObject): PromptArgument[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const f = field as z.ZodType;
    return { name, ...(f.description ? { description: f.description } : {}), required: !f.safeParse(undefined).success };
  });
}

const findAndPay: PromptDefinition<typeof FindCapabilityPromptArguments> = {
  name: 'find_and_pay_for_capability',
  title: 'Find and pay for a capability',
  description: 'Find the capability that does what you need, check its price, and call its tool paying with x402 in USDC.',
  args: FindCapabilityPromptArguments,
  text: ({ need, max_price_usdc }) =>
    [
      `I need: ${need}`,
      '',
      'Use the tools of the Agent Capability Gateway:',
      `1. Call search_capabilities with a few words of the need as \`query\`${max_price_usdc ? ` and \`max_price_usdc\` "${max_price_usdc}"` : ''}. Prefer a LIVE capability that names an MCP \`tool\`.`,
      `2. Read its page, the resource ${CATALOG_RESOURCE_URI}/{capability_id} (or call get_capability with its capability_id): input schema, price, status and latency, example request.`,
      '3. Call its tool with arguments that satisfy the input schema, without payment. It answers isError with the x402 PaymentRequired (structuredContent).',
      `4. Check the price in its \`accepts\` (amount in USDC base units, 6 decimals)${max_price_usdc ? `: pay only if it is at most ${max_price_usdc} USDC` : ''}. Sign one of the accepts and call the tool again with the PaymentPayload in _meta["x402/payment"].`,
      '5. Report the result, the execution_id and the settlement in _meta["x402/payment-response"]. If the call failed, say so: a failed paid call is refunded.',
    ].join('\n'),
};

const runJob: PromptDefinition<typeof RunJobPromptArguments> = {
  name: 'run_job_for_objective',
  title: 'Run a job for an objective',
  description: 'Run a long objective as a gateway job with a USDC budget, follow it to the end, and report its result and proofs.',
  args: RunJobPromptArguments,
  text: ({ objective, budget_usdc, capabilities }, { services, hasTool }) => {
    const listed = capabilities
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const takesObjective = services.catalog
      .list()
      .filter((d) => d.accepts_objective)
      .map((d) => d.id);
    const jobsTool = mcpToolName(gatewayJobs.id);
    const how = hasTool(jobsTool)
      ? `Call the ${jobsTool} tool (as an MCP task if your client supports tasks, then follow it with tasks/get and tasks/result), paying its x402 PaymentRequired for the budget as for any paid tool.`
      : `POST ${services.publicBaseUrl()}/api/v1/jobs with that body, pay its x402 402 for the budget, then poll the poll_url it answers until the job ends, signed in as the payer (sign the sign-in-with-x challenge of its 402, or send your bearer token).`;
    return [
      `Objective: ${objective}`,
      `Budget: at most ${budget_usdc} USDC; the unspent rest is refunded when the job ends.`,
      '',
      'Run it as an Agent Capability Gateway job:',
      listed?.length
        ? `1. The job may use: ${listed.join(', ')}. Read each one's page (${CATALOG_RESOURCE_URI}/{capability_id}) for its input and price.`
        : `1. Choose the capabilities with search_capabilities and their pages (${CATALOG_RESOURCE_URI}/{capability_id}).${takesObjective.length ? ` These take the objective itself as input: ${takesObjective.join(', ')}.` : ''}`,
      `2. Build the job: {"objective": ..., "budget_usdc": ${budget_usdc}, "capabilities": [...], "steps": [{"capability_id": ..., "input": ...}]}. Without steps, each listed capability must accept the objective.`,
      `3. ${how}`,
      '4. Report the job status, what each step returned, the USDC spent and refunded, and the proofs.',
    ].join('\n');
  },
};

const PROMPTS = [findAndPay, runJob] as const;

/** The `prompts/list` answer. */
export function listPrompts(): Prompt[] {
  return PROMPTS.map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: promptArguments(p.args) }));
}

/** The `prompts/get` answer for `name` with `args`; -32602 for an unknown prompt or invalid arguments. */
export function getPrompt(name: string, args: Record<string, string> | undefined, ctx: PromptContext): GetPromptResult {
  const prompt: PromptDefinition<z.ZodObject> | undefined = PROMPTS.find((p) => p.name === name) as PromptDefinition<z.ZodObject> | undefined;
  if (!prompt) throw jsonRpcError(ErrorCode.InvalidParams, `Unknown prompt "${name.slice(0, 64)}". Call prompts/list for the list.`);
  const parsed = prompt.args.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
    throw jsonRpcError(
      ErrorCode.InvalidParams,
      `Invalid arguments for prompt ${prompt.name}: ${issues.map((i) => `${i.path.join('.') || '(arguments)'} ${i.message}`).join('; ')}`,
      {
        errors: issues,
      },
    );
  }
  return {
    description: prompt.description,
    messages: [{ role: 'user', content: { type: 'text', text: prompt.text(parsed.data, ctx) } }],
  };
}

/** Adds `prompts/list` and `prompts/get` to an MCP server (which must declare the `prompts` capability). */
export function registerPrompts(server: Server, ctx: PromptContext): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: listPrompts() }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => getPrompt(request.params.name, request.params.arguments, ctx));
}
