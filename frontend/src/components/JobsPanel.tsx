import { jobCountdown } from "../model/memory";
import type { JobView } from "../model/types";
import { Empty, Panel } from "./Panel";

/** Async wire-trace jobs with their ETA countdown in steps. */
export function JobsPanel({ jobs, step, events, freshJobs }: { jobs: JobView[]; step: number; events: string[]; freshJobs: Set<string> }) {
  const interrupts = events.filter((e) => /interrupt|async timeout/.test(e));
  const pending = jobs.filter((j) => j.status === "pending").length;
  return (
    <Panel title="Async jobs" testId="jobs-panel" badge={`${pending} pending`}>
      {jobs.length === 0 ? (
        <Empty>No wire trace requested.</Empty>
      ) : (
        <ul className="jobs">
          {jobs.map((job) => {
            const { stepsLeft, progress } = jobCountdown(job, step);
            return (
              <li key={job.job_id} className={`job ${job.status} ${freshJobs.has(job.job_id) ? "fresh" : ""}`}
                data-testid="job" data-status={job.status} data-eta={stepsLeft}>
                <div className="job-head">
                  <strong>{job.job_id}</strong>
                  <code className="id-chip">{job.transaction_id ?? `${job.entity_id} · ${job.topic}`}</code>
                  <span className="spacer" />
                  <span className={`status ${job.status}`}>
                    {job.status === "pending" ? `ETA ${stepsLeft} step${stepsLeft === 1 ? "" : "s"}` : job.status}
                  </span>
                </div>
                <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(progress * 100)}>
                  <div style={{ width: `${progress * 100}%` }} />
                </div>
                <div className="muted small">requested at step {job.requested_step} · ready at step {job.ready_at_step}</div>
              </li>
            );
          })}
        </ul>
      )}
      {interrupts.map((e) => (
        <div key={e} className={`event ${/timeout/.test(e) ? "fault" : "interrupt"}`}>{e}</div>
      ))}
    </Panel>
  );
}
