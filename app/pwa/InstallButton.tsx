// "Install app" where the browser offers it; gone once installed.
import { install, usePwa } from './pwa.ts';

export function InstallButton() {
  const offer = usePwa((state) => state.install);
  if (!offer) return null;
  return (
    <button type="button" class="button" onClick={() => void install()}>
      Install app
    </button>
  );
}
