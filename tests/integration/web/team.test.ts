import type { Browser, Page } from 'puppeteer';
import { recordActivity } from '../../../db/identity/activity';
import type { TestApp } from '../../support/app';
import { byRole, closeAppWithBrowser, expectWellBehaved, keepScreenshot, regionText, signInThroughApp, startAppWithBrowser, waitForRegionText, waitForText, withAppPage } from '../../support/browser';
import { signUp, type SignedUpUser } from '../../support/factories';
import { addMember, createTeam, inTeam, invitationMail, invite } from '../../support/teams';

/**
 * The Team page (docs/web.md "Team"): a project made in the app, a member invited by e-mail who accepts
 * in "Invitations to you", a role changed, what a viewer sees, the activity, an invitation cancelled and
 * one declined, a member removed; every step checked against the API.
 */
describe('the team in the dashboard', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => ({ app, browser } = await startAppWithBrowser()));
  afterAll(() => closeAppWithBrowser(app, browser));

  const nameOf = async (user: SignedUpUser) => (await app.request('GET', '/api/users/me', { token: user.accessToken })).body.name as string;
  const api = (user: SignedUpUser, method: string, path: string, teamId?: string, body?: unknown) => app.request(method, path, { token: user.accessToken, headers: teamId ? inTeam(teamId) : {}, body });

  /** Signs in and opens the Team page of the project chosen in the switcher (the personal one unless `project` is named). */
  async function openTeam(page: Page, user: SignedUpUser, project?: string): Promise<void> {
    await signInThroughApp(page, app.url, user.email, user.password);
    await byRole(page, 'heading', 'Templates').wait();
    if (project) {
      await byRole(page, 'combobox', 'Project').click();
      await (await page.waitForSelector(`aria/${project}[role="option"]`))!.click();
    }
    await byRole(page, 'link', 'Team').click();
    if (project) await byRole(page, 'heading', `Team: ${project}`).wait();
  }

  it('makes a project, invites by e-mail; the invitee accepts in "Invitations to you", becomes a viewer and sees no edit controls; the activity tells it', async () => {
    const owner = await signUp(app, { verified: true });
    const invitee = await signUp(app, { verified: true });
    const inviteeName = await nameOf(invitee);
    const project = `Acme ${Math.random().toString(36).slice(2, 8)}`;
    let teamId = '';
    await withAppPage(browser, 'team-owner', async (tab) => {
      const { page } = tab;
      await openTeam(page, owner);
      await byRole(page, 'button', 'New project').click();
      await byRole(page, 'textbox', 'Name').fill(project);
      await byRole(page, 'button', 'Create project').click();
      // The app switches to the new project.
      await byRole(page, 'heading', `Team: ${project}`).wait();
      expect(await page.$eval('aria/Project[role="combobox"]', (el) => (el as HTMLInputElement).value)).toBe(project);
      const teams = (await api(owner, 'GET', '/api/teams')).body.data as Array<{ id: string; name: string; role: string }>;
      const made = teams.find((t) => t.name === project)!;
      expect(made.role).toBe('owner');
      teamId = made.id;

      await byRole(page, 'button', 'Invite a member').click();
      await byRole(page, 'textbox', 'Email').fill(invitee.email);
      await byRole(page, 'button', 'Send invitation').click();
      await waitForText(page, `Invitation sent to ${invitee.email} as member`);
      await keepScreenshot(page, 'team-invited');
      await byRole(page, 'button', 'Done').click();
      await waitForRegionText(page, 'Pending invitations', invitee.email);
      const pending = (await api(owner, 'GET', '/api/teams/invitations', teamId)).body.data;
      expect(pending).toEqual([expect.objectContaining({ email: invitee.email, role: 'member', status: 'pending' })]);
      const invitationId = pending[0].id as string;
      const { mail } = await invitationMail(app, invitationId);
      const link = new RegExp(`https?://\\S+/invitations/${invitationId}\\?token=\\S+`).exec(mail.text)![0];

      // The invitee, in a browser of their own, accepts with the e-mailed link.
      await withAppPage(browser, 'team-invitee', async (other) => {
        const { page: theirs } = other;
        await openTeam(theirs, invitee);
        await waitForRegionText(theirs, 'Invitations to you', project);
        await expectWellBehaved(other, app.url, 'invitations to you');
        await keepScreenshot(theirs, 'team-invitations-to-you');
        await byRole(theirs, 'button', `Accept the invitation to ${project}`).click();
        // Typed as a person would paste it (Puppeteer would set a value of 100 characters or more directly, which React never sees).
        await byRole(theirs, 'textbox', 'Invitation link').fill(link, { typingThreshold: link.length + 1 });
        await byRole(theirs, 'button', 'Accept invitation').click();
        // Joined: the project is in the switcher and chosen.
        await byRole(theirs, 'heading', `Team: ${project}`).wait();
        expect(await theirs.$eval('aria/Project[role="combobox"]', (el) => (el as HTMLInputElement).value)).toBe(project);
        expect(await theirs.$('aria/Invitations to you[role="region"]')).toBeNull();
      });
      const joined = (await api(owner, 'GET', '/api/teams/members', teamId)).body.data;
      expect(joined).toEqual([expect.objectContaining({ email: owner.email, role: 'owner' }), expect.objectContaining({ email: invitee.email, role: 'member' })]);

      // The owner makes them a viewer.
      await page.reload();
      await waitForRegionText(page, 'Members', invitee.email);
      const select = await byRole(page, 'combobox', `Role of ${inviteeName}`).waitHandle();
      await select.select('viewer');
      await waitForText(page, `${inviteeName} is now a viewer`);
      expect((await api(owner, 'GET', '/api/teams/members', teamId)).body.data[1]).toMatchObject({ email: invitee.email, role: 'viewer' });

      // The activity says who did what.
      for (const line of [`created the project “${project}”`, `invited ${invitee.email} as member`, 'joined as member', `changed the role of ${inviteeName} (${invitee.email}) from member to viewer`]) {
        await waitForRegionText(page, 'Activity', line);
      }
      const activity = (await api(owner, 'GET', '/api/teams/activity', teamId)).body.data.map((e: { type: string }) => e.type);
      expect(activity).toEqual(['role_changed', 'member_joined', 'invitation_sent', 'project_created']);
      await expectWellBehaved(tab, app.url, 'team of the owner');
      await keepScreenshot(page, 'team-owner');
    });

    // The viewer sees the lists and no edit control, on Team and on API keys; the API refuses the edits anyway.
    await withAppPage(browser, 'team-viewer', async (tab) => {
      const { page } = tab;
      await openTeam(page, invitee, project);
      await waitForRegionText(page, 'Members', owner.email);
      await waitForRegionText(page, 'Activity', 'from member to viewer');
      for (const [role, name] of [
        ['button', 'Invite a member'],
        ['combobox', `Role of ${inviteeName}`],
        ['button', `Remove ${inviteeName}`],
        ['button', 'Rename'],
        ['button', 'Delete project'],
        ['textbox', 'Project name'],
      ]) {
        expect({ role, name, shown: (await page.$(`aria/${name}[role="${role}"]`)) !== null }).toEqual({ role, name, shown: false });
      }
      expect(await page.$('aria/Pending invitations[role="region"]')).toBeNull();
      expect(await regionText(page, 'Project')).toContain('your role: viewer');
      await expectWellBehaved(tab, app.url, 'team of a viewer');
      await keepScreenshot(page, 'team-viewer');

      await byRole(page, 'link', 'API keys').click();
      await waitForText(page, "Only the project's admins and owner manage its API keys and OAuth clients.");
      expect(await page.$('aria/Create API key[role="button"]')).toBeNull();
      expect(await page.$('aria/Create OAuth client[role="button"]')).toBeNull();
      await expectWellBehaved(tab, app.url, 'API keys of a viewer');
    });
    expect((await api(invitee, 'POST', '/api/teams/members/invite', teamId, { email: 'someone@example.com' })).status).toBe(403);
    expect((await api(invitee, 'PATCH', `/api/teams/members/${invitee.id}/role`, teamId, { role: 'admin' })).status).toBe(403);
    expect((await api(invitee, 'POST', '/api/api-keys', teamId, { name: 'mine' })).status).toBe(403);
    expect((await api(invitee, 'POST', '/api/oauth/clients', teamId, { name: 'mine' })).status).toBe(403);
  });

  it('cancels an invitation, removes a member, declines an invitation to oneself, and pages through the activity', async () => {
    const owner = await signUp(app, { verified: true });
    const team = await createTeam(app, owner, { name: `Busy ${Math.random().toString(36).slice(2, 8)}` });
    const member = await addMember(app, owner, team.id, 'member');
    const memberName = await nameOf(member);
    const stranger = `later-${Math.random().toString(36).slice(2, 8)}@example.com`;
    await invite(app, owner, team.id, stranger, 'viewer');
    const decliner = await signUp(app, { verified: true });
    await invite(app, owner, team.id, decliner.email, 'admin');
    // Enough entries for two pages of 20, the oldest first.
    for (let n = 1; n <= 20; n++) await recordActivity(app.services.db, { projectId: team.id, userId: owner.id, type: 'template_created', data: { template: { id: `t${n}`, name: `Template ${n}` } } });

    await withAppPage(browser, 'team-changes', async (tab) => {
      const { page } = tab;
      await openTeam(page, owner, team.name);

      await waitForRegionText(page, 'Pending invitations', stranger);
      await byRole(page, 'button', `Cancel the invitation to ${stranger}`).click();
      await page.waitForFunction((email) => !document.querySelector('[aria-label="Pending invitations"]')?.textContent?.includes(email), {}, stranger);
      expect((await api(owner, 'GET', '/api/teams/invitations', team.id)).body.data.map((i: { email: string }) => i.email)).toEqual([decliner.email]);
      await waitForRegionText(page, 'Activity', `cancelled the invitation to ${stranger}`);

      await byRole(page, 'button', `Remove ${memberName}`).click();
      await byRole(page, 'dialog', `Remove ${memberName} from ${team.name}?`).wait();
      await keepScreenshot(page, 'team-remove');
      await byRole(page, 'button', 'Remove member').click();
      await page.waitForFunction((email) => !document.querySelector('[aria-label="Members"]')?.textContent?.includes(email), {}, member.email);
      expect((await api(owner, 'GET', '/api/teams/members', team.id)).body.data.map((m: { email: string }) => m.email)).toEqual([owner.email]);
      expect((await api(member, 'GET', '/api/teams/members', team.id)).status).toBe(403);
      await waitForRegionText(page, 'Activity', `removed ${memberName} (${member.email})`);

      // Newest first, 20 a page: the oldest entries are on the next page.
      expect(await regionText(page, 'Activity')).not.toContain(`created the project “${team.name}”`);
      await byRole(page, 'button', 'Older').click();
      await waitForRegionText(page, 'Activity', `created the project “${team.name}”`);
      await waitForText(page, 'Page 2 of 2');
      const total = (await api(owner, 'GET', '/api/teams/activity?limit=20&page=2', team.id)).body;
      expect(total.meta).toMatchObject({ page: 2, totalPages: 2 });
      expect(total.data.at(-1).type).toBe('project_created');
      await byRole(page, 'button', 'Newer').click();
      await waitForRegionText(page, 'Activity', `removed ${memberName}`);
      await expectWellBehaved(tab, app.url, 'team changes');
    });

    await withAppPage(browser, 'team-decline', async (tab) => {
      const { page } = tab;
      await openTeam(page, decliner);
      await waitForRegionText(page, 'Invitations to you', team.name);
      await byRole(page, 'button', `Reject the invitation to ${team.name}`).click();
      await byRole(page, 'button', 'Reject invitation').click();
      await page.waitForFunction(() => !document.querySelector('[aria-label="Invitations to you"]'));
    });
    expect((await api(decliner, 'GET', '/api/teams/invitations/my')).body.data).toEqual([]);
    expect((await api(owner, 'GET', '/api/teams/invitations', team.id)).body.data).toEqual([]);
    const [declined] = (await api(owner, 'GET', '/api/teams/activity?limit=1', team.id)).body.data;
    expect(declined).toMatchObject({ type: 'invitation_rejected', invitation: { email: decliner.email, role: 'admin' } });
  });
});
