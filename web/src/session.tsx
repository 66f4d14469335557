import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, COOKIE_SESSION, errorText, setAccessToken, setTeamId, type User } from './api';

interface Team {
  id: string;
  name: string;
  role: string;
}

interface SessionState {
  /** undefined while the app asks whether a session cookie still works. */
  user: User | null | undefined;
  teams: Team[];
  team: Team | undefined;
  switchTeam(id: string): void;
  signedIn(user: User, accessToken: string, expiresIn: number): Promise<void>;
  signOut(): Promise<void>;
  /** Reads the signed-in user again (after a change to the account, such as turning 2FA off). */
  reloadUser(): Promise<void>;
  /**
   * Reads the person's projects and roles again (after joining, creating, renaming or deleting one, or
   * to see a role changed by the owner); `select` switches to that project. The chosen one stays
   * chosen while it is still on the list, else the first one is.
   */
  reloadTeams(select?: string): Promise<void>;
  /** True once the person signed out here (not when the session ran out): the sign-in page then starts afresh. */
  signedOutHere: boolean;
}

const Session = createContext<SessionState | undefined>(undefined);

export function useSession(): SessionState {
  const session = useContext(Session);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** One refresh at a time: a second concurrent one would present a spent token and end the session (contract §2). */
let refreshing: Promise<{ user: User; accessToken: string; expiresIn: number } | undefined> | undefined;
function refreshOnce() {
  refreshing ??= api
    .POST('/api/auth/refresh', { headers: COOKIE_SESSION })
    .then(({ data }) => (data ? { user: data.user, accessToken: data.accessToken, expiresIn: data.expiresIn } : undefined))
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

const TEAM_KEY = 'formwork.team';

export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [teams, setTeams] = useState<Team[]>([]);
  const [teamId, setTeam] = useState<string | undefined>(undefined);
  const [expiresIn, setExpiresIn] = useState<number | undefined>(undefined);
  const [signedOutHere, setSignedOutHere] = useState(false);

  /** The person's projects; the one named by `select`, else the remembered one, else the first, is chosen. */
  const loadTeams = useCallback(async (select?: string) => {
    const { data } = await api.GET('/api/teams');
    if (!data) return;
    const list = data.data.map(({ id, name, role }) => ({ id, name, role }));
    const wanted = select ?? sessionStorage.getItem(TEAM_KEY);
    const chosen = list.find((t) => t.id === wanted) ?? list[0];
    if (chosen && select) sessionStorage.setItem(TEAM_KEY, chosen.id);
    setTeamId(chosen?.id);
    setTeams(list);
    setTeam(chosen?.id);
  }, []);

  const signedIn = useCallback(
    async (next: User, accessToken: string, lifetime: number) => {
      setAccessToken(accessToken);
      setSignedOutHere(false);
      await loadTeams();
      setExpiresIn(lifetime);
      setUser(next);
    },
    [loadTeams],
  );

  // A page load asks the cookie for a session; none means the sign-in page.
  useEffect(() => {
    // The designer in another site's page (web/src/embed) holds an embed token and no session: it must
    // neither use nor replace one, whatever cookie the browser has for this site.
    if (window.location.pathname.startsWith('/embed/')) {
      setUser(null);
      return;
    }
    let live = true;
    void refreshOnce().then(async (session) => {
      if (!live) return;
      if (session) await signedIn(session.user, session.accessToken, session.expiresIn);
      else setUser(null);
    });
    return () => {
      live = false;
    };
  }, [signedIn]);

  // The access token is renewed a minute before it expires, while the page is open.
  useEffect(() => {
    if (!user || !expiresIn) return;
    const timer = setTimeout(() => {
      void refreshOnce().then((session) => {
        if (session) {
          setAccessToken(session.accessToken);
          setExpiresIn(session.expiresIn);
        } else {
          setAccessToken(undefined);
          setUser(null);
        }
      });
    }, Math.max(10, expiresIn - 60) * 1000);
    return () => clearTimeout(timer);
  }, [user, expiresIn]);

  const value = useMemo<SessionState>(
    () => ({
      user,
      teams,
      team: teams.find((t) => t.id === teamId),
      switchTeam(id) {
        sessionStorage.setItem(TEAM_KEY, id);
        setTeamId(id);
        setTeam(id);
      },
      signedIn,
      async signOut() {
        const { error } = await api.POST('/api/auth/logout', { headers: COOKIE_SESSION });
        if (error) console.warn(errorText(error));
        setAccessToken(undefined);
        setTeamId(undefined);
        setSignedOutHere(true);
        setUser(null);
      },
      signedOutHere,
      async reloadUser() {
        const { data } = await api.GET('/api/users/me');
        if (data) setUser(data as User);
      },
      reloadTeams: loadTeams,
    }),
    [user, teams, teamId, signedIn, signedOutHere, loadTeams],
  );
  return <Session.Provider value={value}>{children}</Session.Provider>;
}
