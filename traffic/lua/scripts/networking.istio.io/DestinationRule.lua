-- sluice's built-in script for Istio DestinationRules (networking.istio.io).
--
-- It adds the subset "canary" (pods labelled istio.service.tag: gray, a
-- label the Rollout's patchPodTemplateMetadata gives the new pods), which
-- the VirtualService script routes to when the Rollout sets
-- disableGenerateCanaryService. The subset is the same at every step;
-- Finalize removes it with the rest of the release's changes.

local spec = obj.data.spec or {}
local subset = { name = "canary", labels = { ["istio.service.tag"] = "gray" } }
local subsets, replaced = {}, false
for _, s in ipairs(spec.subsets or {}) do
  if type(s) == "table" and s.name == "canary" then
    table.insert(subsets, subset)
    replaced = true
  else
    table.insert(subsets, s)
  end
end
if not replaced then
  table.insert(subsets, subset)
end
spec.subsets = subsets
obj.data.spec = spec
return obj.data
