// The stack actions (stack-actions.ts) for the stack open in this tab, wired to its client: the
// stack menu's and the timeline's (restore a checkpoint, open one as a new stack).
import { useMemo } from 'preact/hooks';
import { askToKeep } from './persistence.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { createStackActions, type StackActions } from './stack-actions.ts';
import { stacksClient } from './stacks-client.ts';
import { copyPageKeys, forgetStack, keepStackList, layoutOf, listStacks, openStack, setLayout } from './stacks.ts';

export function useStackActions(current: string): StackActions {
  const client = useStackClient();
  return useMemo(
    () =>
      createStackActions({
        stacks: stacksClient(),
        currentId: current,
        async closeCurrent(mode) {
          if (mode !== 'delete') await client.call('close', mode === 'export' ? { snapshot: true } : {});
          client.close();
        },
        open: openStack,
        remember: (made) => keepStackList([...listStacks().filter((entry) => entry.id !== made.id), made]),
        copyPageKeys,
        forgetStack,
        layoutOf,
        setLayout,
        askToKeep,
      }),
    [client, current],
  );
}
