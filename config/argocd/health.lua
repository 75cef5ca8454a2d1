-- Argo CD health check for work.open-cluster-management.io/PlacementManifestWork.
-- Healthy when Ready is True for the latest generation; Degraded when Stalled (the user must act) or when
-- clusters are degraded; Progressing otherwise.
local hs = {}

local function condition(conditionType)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

if obj.status == nil or obj.status.observedGeneration == nil or obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe the latest spec"
  return hs
end

local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
  return hs
end

local summary = obj.status.placedManifestWorkSummary
if summary ~= nil and summary.degraded ~= nil and summary.degraded > 0 then
  hs.status = "Degraded"
else
  hs.status = "Progressing"
end
if ready ~= nil and ready.message ~= nil then
  hs.message = ready.message
else
  hs.message = "Waiting for clusters to become available"
end
return hs
