// The stack switcher in the header: each stack is a separate workspace with its own computer,
// memory and canvas. Choosing one opens it in this tab.
import { useState } from 'preact/hooks';
import { listStacks, newStack, openStack } from './stacks.ts';

export function StackSwitcher({ current }: { current: string }) {
  const [stacks] = useState(listStacks);
  return (
    <label class="stack-switcher">
      <span class="visually-hidden">Stack</span>
      <select
        aria-label="Stack"
        value={current}
        onChange={(event) => {
          const choice = event.currentTarget.value;
          if (choice === '__new__') {
            const name = prompt('Name the new stack', 'New stack');
            if (name === null) {
              event.currentTarget.value = current;
              return;
            }
            openStack(newStack(name).id);
          } else if (choice !== current) openStack(choice);
        }}
      >
        {stacks.map((stack) => (
          <option key={stack.id} value={stack.id}>
            {stack.name}
          </option>
        ))}
        <option value="__new__">New stack…</option>
      </select>
    </label>
  );
}
