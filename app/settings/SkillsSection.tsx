// Skills: the procedures the agent can load (two come with the app). Install one from a folder
// (its SKILL.md at the top) or a lone SKILL.md: what it contains and the tools it uses are shown
// before it is installed, and it never changes the permission rules.
import { useEffect, useState } from 'preact/hooks';
import type { SkillDetail, SkillInfo } from '../../protocol/skills.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { SectionMessage, type SectionMessageState } from './SectionMessage.tsx';

type Picked = { path: string; text: string }[];

export function SkillsSection() {
  const client = useStackClient();
  const [skills, setSkills] = useState<SkillInfo[] | null>(null);
  const [preview, setPreview] = useState<{ skill: SkillDetail; files: Picked } | null>(null);
  const [message, setMessage] = useState<SectionMessageState | null>(null);
  const refresh = () => client.call('list_skills', {}).then(setSkills, () => setMessage({ error: true, text: 'Could not list the skills.' }));
  useEffect(() => void refresh(), []);

  const failed = (failure: unknown, what: string) => setMessage({ error: true, text: failure instanceof StackCallError ? failure.message : what });

  const pick = async (list: FileList | null) => {
    setMessage(null);
    setPreview(null);
    if (!list?.length) return;
    const files: Picked = await Promise.all(Array.from(list, async (file) => ({ path: file.webkitRelativePath || file.name, text: await file.text() })));
    try {
      setPreview({ skill: await client.call('install_skill', { files, dry_run: true }), files });
    } catch (failure) {
      failed(failure, 'The skill could not be read.');
    }
  };

  const install = async () => {
    if (!preview) return;
    try {
      const skill = await client.call('install_skill', { files: preview.files });
      setPreview(null);
      setMessage({ error: false, text: `Installed "${skill.name}": the agent sees it from your next message.` });
      await refresh();
    } catch (failure) {
      failed(failure, 'The skill could not be installed.');
    }
  };

  return (
    <section class="rules skills" aria-labelledby="skills-title">
      <h3 id="skills-title">Skills</h3>
      <p class="rules-hint">Procedures the agent reads when a task matches one. It sees each by name and description, and reads the whole skill only when it needs it. A skill grants nothing: its tools ask as usual.</p>
      <ul class="rules-list" aria-label="Skills">
        {(skills ?? []).map((skill) => (
          <li key={skill.name} class="rule">
            <span class="rule-effect">{skill.source === 'built_in' ? 'Built in' : 'Installed'}</span>
            <span class="rule-text">
              <strong>{skill.name}</strong> — {skill.description}
              {skill.tools.length > 0 && <small> (uses {skill.tools.join(', ')})</small>}
            </span>
            {skill.source === 'installed' && (
              <button
                type="button"
                class="button rule-remove"
                aria-label={`Remove skill ${skill.name}`}
                onClick={() => void client.call('remove_skill', { name: skill.name }).then(refresh, (failure: unknown) => failed(failure, 'The skill could not be removed.'))}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      <div class="skills-install">
        <label class="button">
          Install from a folder…
          <input type="file" class="visually-hidden" aria-label="Skill folder to install" {...{ webkitdirectory: true }} onChange={(e) => void pick(e.currentTarget.files).finally(() => (e.currentTarget.value = ''))} />
        </label>
        <label class="button">
          Install a SKILL.md…
          <input type="file" class="visually-hidden" aria-label="SKILL.md to install" accept=".md,text/markdown" onChange={(e) => void pick(e.currentTarget.files).finally(() => (e.currentTarget.value = ''))} />
        </label>
      </div>
      {preview && (
        <div class="skill-preview" role="group" aria-label={`Install skill ${preview.skill.name}?`}>
          <p>
            <strong>{preview.skill.name}</strong> — {preview.skill.description}
          </p>
          <p>
            Tools it uses: {preview.skill.tools.length ? preview.skill.tools.join(', ') : 'none named'} (each still asks as your rules say).
            {preview.skill.files.length > 0 && <> Other files: {preview.skill.files.join(', ')}.</>}
          </p>
          <pre class="tool-text">{preview.skill.text}</pre>
          <div class="settings-actions">
            <button type="button" class="button" onClick={() => setPreview(null)}>
              Cancel
            </button>
            <button type="button" class="button button--primary" onClick={() => void install()}>
              Install
            </button>
          </div>
        </div>
      )}
      <SectionMessage message={message} />
    </section>
  );
}
