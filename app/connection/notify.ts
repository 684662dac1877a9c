// A system notification when a scheduled task's run finishes while the tab is in the background,
// if the user allowed them (the Tasks window's "Notify me"). Replayed history never notifies.
import type { StackEvent } from '../../protocol/events.ts';
import type { StackView } from './events.ts';

const openedAt = Date.now();

/** The notification's title and body for each scheduled run these events finish. */
export function finishedRuns(events: StackEvent[], scheduled: StackView['scheduled'], since: number): { title: string; body: string; tag: string }[] {
  const shown = [];
  for (const event of events) {
    if (event.type !== 'mission_finished' || event.at < since) continue;
    const task = scheduled[event.mission_id];
    if (!task) continue;
    const body =
      event.status === 'completed'
        ? 'Finished. Open Stackdocs to read what it did.'
        : event.status === 'failed'
          ? `Failed${task.attempt < task.of ? ', and will be tried again' : ''}: ${event.error?.message ?? 'it did not finish.'}`
          : 'Stopped before it finished.';
    shown.push({ title: `Scheduled task: ${task.title}`, body, tag: `task-${task.id}` });
  }
  return shown;
}

export function notifyFinishedRuns(events: StackEvent[], scheduled: StackView['scheduled']): void {
  // Every batch of events passes here, so the cheap checks go first: Chromium answers
  // `Notification.permission` by asking the browser process, synchronously, and with the browser
  // busy that took 133 ms of a batch's handling while the user typed.
  if (document.visibilityState !== 'hidden' || typeof Notification === 'undefined') return;
  const finished = finishedRuns(events, scheduled, openedAt);
  if (!finished.length || Notification.permission !== 'granted') return;
  for (const { title, body, tag } of finished) {
    const options = { body, tag, icon: `${import.meta.env.BASE_URL}icons/icon-192.png` };
    // Through the service worker where there is one (the installed app); else from the page.
    void (navigator.serviceWorker?.getRegistration() ?? Promise.resolve(undefined))
      .then((registration) => (registration ? registration.showNotification(title, options) : void new Notification(title, options)))
      .catch(() => {});
  }
}
