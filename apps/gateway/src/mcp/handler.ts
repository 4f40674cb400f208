import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { paymentSchemeSentence } from '@acg/registry';
import type { Services } from '../services.js';
import { redisUnavailableProblem } from '../trpc/problem.js';
import { JobTaskStore, taskCaller, type TaskCaller } from './jobTasks.js';
import { callJobsTool, type JobsCall } from './jobTool.js';
import { callCapabilityTool } from './paidTool.js';
import { registerPrompts } from './prompts.js';
import { registerCatalogResources } from './resources.js';
import { problemResult, toolError } from './results.js';
import { McpTools } from './tools.js';

/** What the gateway's MCP server calls itself in `initialize`. */
export const MCP_SERVER_INFO = { name: 'agent-capability-gateway', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Tools of the Agent Capability Gateway. search_capabilities, get_capability and get_health are free. ' +
  'Every other tool runs one capability (tool name = capability id with "." replaced by "_") and is paid per call with x402 in USDC: ' +
  'call it without _meta["x402/payment"] to get the x402 PaymentRequired (isError, in structuredContent and in content[0].text as {"x402/error": ...}), ' +
  'sign one of its accepts (e.g. with @x402/core and @x402/evm; for scheme exact an EIP-3009 transferWithAuthorization; for upto, offered after exact on tools whose route\'s offers ask different prices, a Permit2 ceiling of which only the answering offer\'s price is settled; for batch-settlement, offered after exact on fixed-price tools when the operator turned it on, a deposit or a cumulative voucher over a channel), and call again with the PaymentPayload in _meta["x402/payment"]. ' +
  `${paymentSchemeSentence()} ` +
  'The result carries _meta["x402/payment-response"]. gateway_jobs runs a job paid for its budget; call it as an MCP task to poll tasks/get, read tasks/result or tasks/cancel it. One payment runs the capability once; sending it again returns the stored result to its payer (with the payment-identifier it was first sent with, or the payer\'s bearer token), a receipt to anyone else; a failure is refunded. ' +
  'Resources: acg://capabilities (the catalog) and acg://capabilities/{capability_id} (a capability page in Markdown; /input-schema and /output-schema for its JSON Schemas). ' +
  'Prompts: find_and_pay_for_capability and run_job_for_objective.';

/**
 * The MCP endpoint `POST {base_url}/mcp` (docs/decisions.md "Agents: MCP and x402 extensions"): MCP Streamable
 * HTTP with `@modelcontextprotocol/sdk` in stateless mode (`sessionIdGenerator: undefined`, JSON
 * responses, no session, any protocol version the SDK supports, the latest by default), so any
 * replica answers any request. Each request gets its own `Server` and transport (the SDK's
 * stateless pattern); the tools come from the catalog at each `tools/list` ({@link McpTools}), the
 * resources from `/registry` (resources.ts) and the prompts from prompts.ts.
 * The HTTP edge (route table, rate limit, the 1 MiB body limit and JSON parsing of `http/body.ts`)
 * runs before this; GET and DELETE are 405 there (no SSE stream, no session to end).
 */
export class McpEndpoint {
  private readonly tools: McpTools;

  constructor(private readonly services: Services) {
    this.tools = new McpTools(services.catalog);
  }

  /** Answers one POST whose JSON body the HTTP edge already parsed. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const authorization = typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined;
    const server = this.server((req as IncomingMessage & { id?: string }).id, authorization);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  private server(requestId: string | undefined, authorization: string | undefined): Server {
    // who asks, for the task store and for a payer resending its payment (resolved once, when needed)
    let caller: Promise<TaskCaller> | undefined;
    const callerOf = () => (caller ??= taskCaller(this.services, authorization));
    const server = new Server(MCP_SERVER_INFO, {
      // tasks: jobs as MCP tasks (jobTasks.ts, docs/mcp-tasks.md), created by tools/call of gateway_jobs, cancellable, not listed
      capabilities: {
        tools: { listChanged: false },
        resources: { listChanged: false },
        prompts: { listChanged: false },
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
      },
      instructions: INSTRUCTIONS,
      taskStore: new JobTaskStore(this.services, callerOf),
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools.list() }));
    registerCatalogResources(server, this.services);
    registerPrompts(server, { services: this.services, hasTool: (name) => this.tools.resolve(name) !== undefined });
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const { name, arguments: args, _meta: meta, task } = request.params;
      if (this.tools.resolve(name)?.kind === 'jobs') return this.callJobs(name, requestId, { args, meta, task, caller: callerOf });
      if (task)
        throw new McpError(
          ErrorCode.MethodNotFound,
          `Tool "${name.slice(0, 64)}" does not run as a task (execution.taskSupport is not set); call it without params.task.`,
        );
      return this.call(name, args, meta, requestId, extra.requestInfo?.headers.authorization);
    });
    return server;
  }

  /** `authorization`: the HTTP request's Authorization header (a bearer token proves the payer when a settled payment is resent). */
  private async call(
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    requestId: string | undefined,
    authorization?: string | string[],
  ): Promise<CallToolResult> {
    const tool = this.tools.resolve(name);
    if (!tool || tool.kind === 'jobs') throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name.slice(0, 64)}". Call tools/list for the list.`);
    return this.guard(name, requestId, () =>
      tool.kind === 'free'
        ? tool.tool.call(this.services, args)
        : callCapabilityTool(this.services, tool.definition, args, meta, typeof authorization === 'string' ? authorization : undefined),
    );
  }

  /** `gateway_jobs` (jobTool.ts); a task-augmented call that failed unexpectedly is a JSON-RPC error carrying the problem (a CreateTaskResult cannot be an error). */
  private async callJobs(name: string, requestId: string | undefined, call: JobsCall) {
    const result = await this.guard(name, requestId, () => callJobsTool(this.services, call));
    if (call.task && 'isError' in result && result.isError) {
      const first = (result as CallToolResult).content[0];
      const text = first?.type === 'text' ? first.text : '{}';
      const problem = JSON.parse(text) as Record<string, unknown>;
      throw new McpError(ErrorCode.InternalError, String(problem.detail ?? 'The job could not start.'), problem);
    }
    return result;
  }

  /** Runs a tool call; Redis unavailable → a 503 problem result, any other failure (but a JSON-RPC error) → a logged 500 problem result. */
  private async guard<R>(name: string, requestId: string | undefined, run: () => Promise<R>): Promise<R | CallToolResult> {
    try {
      return await run();
    } catch (e) {
      if (e instanceof McpError) throw e;
      const unavailable = redisUnavailableProblem(e);
      if (unavailable) {
        this.services.log.warn({ tool: name, err: String((e as Error)?.message ?? e).slice(0, 200) }, 'redis unavailable');
        return problemResult({ ...unavailable.body, retry_after_seconds: Number(unavailable.headers['Retry-After']) });
      }
      // the real cause (class, message, stack; URLs and secrets redacted by the logger)
      this.services.log.error({ request_id: requestId, tool: name, err: e }, 'mcp tool call failed');
      return toolError(500, 'An internal error occurred; it was logged. Retry later.');
    }
  }
}
