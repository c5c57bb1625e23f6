-- Argo CD health of a sluice GitGate, gitops.sluice.dev/v1alpha1. Its conditions follow
-- Flux's (fluxcd/pkg/apis/meta): Ready always, Reconciling and Stalled only while True.
-- Uses only the base and table libraries, as Argo CD runs scripts from argocd-cm.
--
--   Suspended    spec.suspend is true
--   Progressing  status not yet written for the current generation; Reconciling=True;
--                Ready missing or Unknown (with Ready's message when it has one)
--   Degraded     Stalled=True (retrying cannot help: fix the spec or a Secret);
--                Ready=False (the last reconcile failed; it is retried)
--   Healthy      Ready=True
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

if tbl(obj.spec).suspend == true then
  return done("Suspended", "GitGate is suspended")
end
local status = obj.status
if type(status) ~= "table" then
  return done("Progressing", "Waiting for the GitGate to be reconciled")
end
local generation = tbl(obj.metadata).generation
if type(generation) == "number" and status.observedGeneration ~= generation then
  return done("Progressing", "Waiting for the GitGate's generation " .. tostring(generation) .. " to be observed")
end

local stalled = condition(status.conditions, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  return done("Degraded", str(stalled.message))
end
local reconciling = condition(status.conditions, "Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  return done("Progressing", str(reconciling.message))
end
local ready = condition(status.conditions, "Ready")
if ready ~= nil and ready.status == "True" then
  return done("Healthy", str(ready.message))
end
if ready ~= nil and ready.status == "False" then
  return done("Degraded", str(ready.message))
end
if ready ~= nil and str(ready.message) ~= "" then
  return done("Progressing", ready.message)
end
return done("Progressing", "Waiting for the GitGate to be reconciled")
