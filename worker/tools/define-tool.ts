// The one wrapper every tool goes through: validates input against its schema (errors worded for
// the model), derives the JSON schema the model sees, and caps output size.
import { z } from 'zod';
import type { AgentTool, ToolContext, ToolResult } from '../agent/types.ts';

/** Larger outputs are cut, saying so, so one tool call cannot flood the context. */
export const MAX_TOOL_OUTPUT_CHARS = 30_000;

export interface ToolDefinition<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  title(input: z.infer<S>): string;
  /** May throw: the wrapper turns a throw into an error result. */
  run(input: z.infer<S>, context: ToolContext): Promise<ToolResult | string>;
}

export function defineTool<S extends z.ZodObject>(definition: ToolDefinition<S>): AgentTool {
  const { $schema: _ignored, ...inputSchema } = z.toJSONSchema(definition.schema, { target: 'draft-7' });
  return {
    spec: {
      name: definition.name,
      description: definition.description.trim(),
      input_schema: inputSchema as AgentTool['spec']['input_schema'],
    },
    title(input) {
      const parsed = definition.schema.safeParse(input);
      return parsed.success ? definition.title(parsed.data) : definition.name;
    },
    invalid(input) {
      const parsed = definition.schema.safeParse(input);
      return parsed.success ? null : { content: describeInvalidInput(definition.name, parsed.error), is_error: true };
    },
    async execute(input, context) {
      const parsed = definition.schema.safeParse(input);
      if (!parsed.success) {
        return { content: describeInvalidInput(definition.name, parsed.error), is_error: true };
      }
      try {
        const result = await definition.run(parsed.data, context);
        return capOutput(typeof result === 'string' ? { content: result } : result);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return { content: `${definition.name} failed: ${message}`, is_error: true };
      }
    },
  };
}

function describeInvalidInput(name: string, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.join('.') : '(input)';
    // A bad record key nests its reason (e.g. the key's pattern); the model needs that reason.
    const nested = 'issues' in issue && Array.isArray(issue.issues) ? (issue.issues as { message: string }[]).map((inner) => inner.message) : [];
    return `- ${path}: ${[issue.message, ...nested].join(': ')}`;
  });
  return `Invalid input for ${name}:\n${problems.join('\n')}\nFix the input and call ${name} again.`;
}

function capOutput(result: ToolResult): ToolResult {
  if (result.content.length <= MAX_TOOL_OUTPUT_CHARS) return result;
  const cut = result.content.length - MAX_TOOL_OUTPUT_CHARS;
  return {
    ...result,
    content: `${result.content.slice(0, MAX_TOOL_OUTPUT_CHARS)}\n[output truncated: ${cut} more characters not shown]`,
  };
}
