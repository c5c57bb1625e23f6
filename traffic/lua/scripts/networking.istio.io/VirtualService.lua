-- sluice's built-in script for Istio VirtualServices (networking.istio.io).
--
-- obj.data.spec is the VirtualService's spec before the release; the
-- script returns obj.data with the spec of the current step:
--   * with a weight (obj.canaryWeight >= 0), every http, tcp and tls route
--     that sends to the stable Service gives canaryWeight percent of the
--     stable Service's share to the canary Service (a destination added at
--     the end of the route, a copy of the stable one with the canary host);
--   * with matches, one http route per match is put before all others; it
--     sends what it matches to the canary Service, changing the request
--     headers as obj.requestHeaderModifier says.
-- When the canary Service is the stable Service itself (the Rollout sets
-- disableGenerateCanaryService), the canary destination is the stable host
-- with the subset "canary" (see the DestinationRule script).

local stable = obj.stableService
local canary = obj.canaryService
local spec = obj.data.spec or {}

local function copy(v)
  if type(v) ~= "table" then
    return v
  end
  local out = {}
  for k, e in pairs(v) do
    out[k] = copy(e)
  end
  return out
end

-- shortName is the Service name of a host: "reviews" for
-- "reviews.default.svc.cluster.local".
local function shortName(host)
  if type(host) ~= "string" then
    return nil
  end
  local dot = string.find(host, ".", 1, true)
  if dot == nil then
    return host
  end
  return string.sub(host, 1, dot - 1)
end

local function toStable(entry)
  return type(entry) == "table" and type(entry.destination) == "table"
    and shortName(entry.destination.host) == stable
    and not (canary == stable and entry.destination.subset == "canary")
end

-- canaryDestination is a copy of the stable destination d that goes to
-- the canary Service, keeping d's namespace suffix and port.
local function canaryDestination(d)
  local out = copy(d)
  local dot = string.find(d.host, ".", 1, true)
  if dot == nil then
    out.host = canary
  else
    out.host = canary .. string.sub(d.host, dot)
  end
  if canary == stable then
    out.subset = "canary"
  else
    out.subset = nil
  end
  return out
end

-- split gives weight percent of the stable share of route to the canary.
local function split(route, weight)
  local entries = route.route
  if type(entries) ~= "table" then
    return
  end
  local function weightOf(e)
    if e.weight ~= nil then
      return e.weight
    end
    if #entries == 1 then
      return 100
    end
    return 0
  end
  local stables, share = {}, 0
  for _, e in ipairs(entries) do
    if toStable(e) then
      table.insert(stables, e)
      share = share + weightOf(e)
    end
  end
  if #stables == 0 then
    return
  end
  local toCanary = math.floor(share * weight / 100 + 0.5)
  local left, given = share - toCanary, 0
  local weights = {}
  for i, e in ipairs(stables) do
    weights[i] = 0
    if share > 0 then
      weights[i] = math.floor(weightOf(e) * left / share)
    end
    given = given + weights[i]
  end
  weights[1] = weights[1] + left - given
  for i, e in ipairs(stables) do
    e.weight = weights[i]
  end
  local c = copy(stables[1])
  c.destination = canaryDestination(stables[1].destination)
  c.weight = toCanary
  table.insert(entries, c)
end

local function stringMatch(m, default)
  local kind = m.type or default
  if kind == "RegularExpression" then
    return { regex = m.value }
  elseif kind == "PathPrefix" then
    return { prefix = m.value }
  end
  return { exact = m.value }
end

local function matchRequest(m)
  local out = {}
  if type(m.path) == "table" then
    out.uri = stringMatch(m.path, "PathPrefix")
  end
  if type(m.headers) == "table" and #m.headers > 0 then
    out.headers = {}
    for _, h in ipairs(m.headers) do
      out.headers[string.lower(h.name)] = stringMatch(h, "Exact")
    end
  end
  if type(m.queryParams) == "table" and #m.queryParams > 0 then
    out.queryParams = {}
    for _, q in ipairs(m.queryParams) do
      out.queryParams[q.name] = stringMatch(q, "Exact")
    end
  end
  return out
end

local function headerOperations(mod)
  local ops, any = {}, false
  for _, field in ipairs({ "set", "add" }) do
    if type(mod[field]) == "table" and #mod[field] > 0 then
      ops[field] = {}
      for _, h in ipairs(mod[field]) do
        ops[field][h.name] = h.value
      end
      any = true
    end
  end
  if type(mod.remove) == "table" and #mod.remove > 0 then
    ops.remove = copy(mod.remove)
    any = true
  end
  if any then
    return { request = ops }
  end
  return nil
end

-- firstStable is the first destination of the http routes that goes to
-- the stable Service.
local function firstStable()
  for _, route in ipairs(spec.http or {}) do
    for _, e in ipairs(route.route or {}) do
      if toStable(e) then
        return e.destination
      end
    end
  end
  return { host = stable }
end

local template = firstStable()

if obj.canaryWeight ~= nil and obj.canaryWeight >= 0 then
  for _, list in ipairs({ "http", "tcp", "tls" }) do
    for _, route in ipairs(spec[list] or {}) do
      split(route, obj.canaryWeight)
    end
  end
end

if type(obj.matches) == "table" and #obj.matches > 0 then
  local routes = {}
  for _, m in ipairs(obj.matches) do
    local r = {
      match = { matchRequest(m) },
      route = { { destination = canaryDestination(template) } },
    }
    if type(obj.requestHeaderModifier) == "table" then
      r.headers = headerOperations(obj.requestHeaderModifier)
    end
    table.insert(routes, r)
  end
  for _, route in ipairs(spec.http or {}) do
    table.insert(routes, route)
  end
  spec.http = routes
end

obj.data.spec = spec
return obj.data
