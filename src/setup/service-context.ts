/** What every platform's plan is made from (built once by planService). */
export interface ServiceContext {
  /** The absolute command the service runs: this memsvc, then `server --service`. */
  argv: string[];
  /** The service home, absolute. */
  home: string;
  /** Environment the service sets: MEMSVC_HOME and the non-secret MEMSVC_* settings of the installing shell. */
  vars: Record<string, string>;
  env: NodeJS.ProcessEnv;
  /** The user's home folder (HOME / USERPROFILE). */
  userHome: string;
  /** <home>/logs/server.log */
  logFile: string;
  uid: number;
}

/** A manager command; `fallback` runs when it fails (e.g. `launchctl load -w` for an old launchctl). */
export interface Step {
  argv: string[];
  fallback?: string[];
  /** Failure is expected and harmless (stopping a job that is not loaded). */
  optional?: boolean;
}

export interface PlatformPlan {
  manager: "launchd" | "systemd" | "windows-task";
  file: string;
  content: string;
  mode: number;
  /** A status command of the manager: it fails where the manager is absent or unusable. */
  probe: string[];
  /** First install. */
  commands: Step[];
  /** The file changed under a loaded service. */
  reloadCommands: Step[];
  /** Before the file is removed. */
  removeCommands: Step[];
  /** After the file is removed. */
  afterRemoveCommands: Step[];
  /** Exit 0 when the manager runs the service. */
  statusCommand: string[];
  /** Where the server's output goes, for messages. */
  logHint: string;
}
