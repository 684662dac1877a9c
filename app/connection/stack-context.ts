// Gives components the open stack's client without threading it through props.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { StackClient } from './stack-client.ts';

export const StackClientContext = createContext<StackClient | null>(null);

export function useStackClient(): StackClient {
  const client = useContext(StackClientContext);
  if (!client) throw new Error('useStackClient needs a StackClientContext provider');
  return client;
}
