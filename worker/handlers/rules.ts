// What the agent may do: answers to its permission questions, the permission rules, the user's
// hooks (which can only block) and MCP servers (their tools, each call asked about first).
import { HooksError } from '../hooks.ts';
import { McpConfigError } from '../mcp/config.ts';
import type { Handlers, StackContext } from './context.ts';
import { RequestError } from '../request-error.ts';

export function ruleHandlers(ctx: StackContext): Handlers<'answer_permission' | 'list_permission_rules' | 'add_permission_rule' | 'remove_permission_rule' | 'get_hooks' | 'save_hooks' | 'get_mcp' | 'save_mcp' | 'restart_mcp'> {
  const { gate, hooks, mcp } = ctx;
  return {
    async answer_permission(params) {
      return { answered: gate.answer(params.ask_id, params.allow === true) };
    },

    async list_permission_rules() {
      return gate.rules();
    },

    async add_permission_rule(params) {
      return (await gate.addRule(params, 'user'));
    },

    async remove_permission_rule(params) {
      await gate.removeRule(params.rule_id);
      return {};
    },

    async get_hooks() {
      return hooks.info();
    },

    async save_hooks(params) {
      if (typeof params?.text !== 'string') throw new RequestError({ code: 'bad_request', message: 'Hooks are saved as the text of their JSON file.' });
      try {
        return (await hooks.save(params.text));
      } catch (error) {
        if (error instanceof HooksError) throw new RequestError({ code: 'bad_request', message: error.message });
        throw error;
      }
    },

    async get_mcp() {
      mcp.startAll();
      return mcp.info();
    },

    async save_mcp(params) {
      if (typeof params?.text !== 'string') throw new RequestError({ code: 'bad_request', message: 'MCP servers are saved as the text of their JSON file.' });
      try {
        await mcp.save(params.text);
        mcp.startAll();
        return mcp.info();
      } catch (error) {
        if (error instanceof McpConfigError) throw new RequestError({ code: 'bad_request', message: error.message });
        throw error;
      }
    },

    async restart_mcp(params) {
      try {
        return await mcp.restart(String(params?.name ?? ''));
      } catch (error) {
        if (error instanceof McpConfigError) throw new RequestError({ code: 'bad_request', message: error.message });
        throw error;
      }
    },
  };
}
