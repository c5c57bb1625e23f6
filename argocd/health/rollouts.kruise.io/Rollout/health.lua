-- Argo CD health of a sluice (OpenKruise-compatible) Rollout, rollouts.kruise.io/v1beta1.
-- Uses only the base and table libraries, as Argo CD runs scripts from argocd-cm.
--
--   Progressing  status not yet written for the current generation; a release running;
--                a timed pause (it goes on by itself); Disabling or Terminating
--   Suspended    a step waits for an approval (StepPaused without pause.duration), or
--                spec.strategy.paused freezes the release
--   Degraded     Supported=False (the message names what sluice ignores or cannot release),
--                Stalled=True (a step's pods missed the progress deadline, or an aborted
--                release whose kind cannot go back to its stable revision), phase Aborted
--                (the release was aborted: every pod and all traffic held on the stable
--                revision until Git changes or it is retried)
--   Healthy      no release in progress (phase Healthy, including after a rollback), the
--                workload does not exist yet (phase Initial), or the Rollout is Disabled
local hs = {}

local function tbl(v)
  if type(v) == "table" then
    return v
  end
  return {}
end

local function str(v)
  if type(v) == "string" then
    return v
  end
  return ""
end

local function condition(conditions, kind)
  for _, c in ipairs(tbl(conditions)) do
    if type(c) == "table" and c.type == kind then
      return c
    end
  end
  return nil
end

local function done(status, message)
  hs.status = status
  hs.message = message
  return hs
end

local spec = tbl(obj.spec)
local strategy = tbl(spec.strategy)
local status = obj.status
if type(status) ~= "table" then
  return done("Progressing", "Waiting for the Rollout to be reconciled")
end
local generation = tbl(obj.metadata).generation
if type(generation) == "number" and status.observedGeneration ~= generation then
  return done("Progressing", "Waiting for the Rollout's generation " .. tostring(generation) .. " to be observed")
end

local supported = condition(status.conditions, "Supported")
if supported ~= nil and supported.status == "False" then
  return done("Degraded", "Not supported: " .. str(supported.message))
end
local stalled = condition(status.conditions, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  return done("Degraded", "Stalled: " .. str(stalled.message))
end

local phase = str(status.phase)
local message = str(status.message)
if phase == "Aborted" then
  return done("Degraded", "Aborted: " .. message)
end
if phase == "Initial" then
  return done("Healthy", "No workload yet: " .. message)
end
if phase == "Disabled" then
  return done("Healthy", "Rollout is disabled: updates of the workload are not held")
end
if phase == "Disabling" or phase == "Terminating" then
  return done("Progressing", message)
end
if phase == "Healthy" then
  if message == "" then
    message = "Rollout is healthy"
  end
  return done("Healthy", message)
end
if phase ~= "Progressing" then
  return done("Progressing", "Waiting for the Rollout to be reconciled")
end

-- A release is in progress.
if strategy.paused == true then
  return done("Suspended", "Paused by spec.strategy.paused: " .. message)
end
local progressing = condition(status.conditions, "Progressing")
if progressing ~= nil and progressing.reason == "Paused" then
  return done("Suspended", "Paused by spec.strategy.paused: " .. message)
end

local release = status.canaryStatus
local steps = tbl(strategy.canary).steps
if type(release) ~= "table" then
  release = status.blueGreenStatus
  steps = tbl(strategy.blueGreen).steps
end
release = tbl(release)
if release.currentStepState == "StepPaused" then
  local index = release.currentStepIndex
  local step = nil
  if type(index) == "number" then
    step = tbl(steps)[index]
  end
  local duration = tbl(tbl(step).pause).duration
  if type(duration) == "number" and duration > 0 then
    return done("Progressing", message)
  end
  return done("Suspended", message)
end
if message == "" then
  message = "Rollout is progressing"
end
return done("Progressing", message)
