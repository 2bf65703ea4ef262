-- Argo CD health check for plimsoll.dev/CapacityTest.
--
-- Argo CD runs this with the live object in `obj` (Lua 5.1, no os/io) and
-- shows the returned status and message:
--   Pending, Queued, Provisioning, Running -> Progressing (what it is doing)
--   Succeeded                              -> Healthy (the ceiling found and, with
--                                             spec.regression, its change)
--   Succeeded with Regressed=True          -> Degraded (the ceiling fell below its baseline)
--   Succeeded with Proved=False            -> Degraded (the proof run's deployment did not hold)
--   Succeeded with Proved=True             -> Healthy (the proof's sentence)
--   Succeeded, a flight that did not hold  -> Degraded (status.autoscaling's sentence, and
--                                             whether the recommended HPA held)
--   Succeeded, a flight that held          -> Healthy (its sentence)
--   Failed                                 -> Degraded (why, from the conditions)
-- A spec the operator has not observed yet is Progressing too, so an Argo CD
-- sync that changes a test never shows the previous run's verdict as current.
-- Installed through argocd-cm: see argocd-cm-snippet.yaml beside this file.

local hs = {}

-- JSON numbers arrive as floats: print 120 rather than 120.0.
local function number(value)
  if type(value) == "number" and value == math.floor(value) then
    return string.format("%d", value)
  end
  return tostring(value)
end

local function condition(status, wanted)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == wanted then
      return c
    end
  end
  return nil
end

local function nonempty(text)
  return text ~= nil and text ~= ""
end

local function describe_ceiling(ceiling)
  if ceiling == nil then
    return nil
  end
  local unit = ceiling.unit or ""
  local text
  if ceiling.level ~= nil then
    text = "ceiling " .. number(ceiling.level) .. " " .. unit
  else
    text = "no level passed"
  end
  if ceiling.variant ~= nil and ceiling.variant ~= "default" then
    text = ceiling.variant .. ": " .. text
  end
  if ceiling.limitedBy ~= nil and ceiling.limitedBy ~= "unknown" then
    text = text .. ", limited by " .. ceiling.limitedBy
  end
  if ceiling.complete == false then
    local range = ""
    if ceiling.low ~= nil and ceiling.high ~= nil then
      range = " between " .. number(ceiling.low) .. " and " .. number(ceiling.high)
    end
    text = text .. " (range only" .. range .. ")"
  end
  return text
end

-- One entry of status.variants: "heavy: ceiling 80 rps, limited by cpu, -20.0% (lower)".
-- Only a Succeeded run is described this way, so every variant has its ceiling.
local function describe_variant(variant)
  local text
  if variant.ceiling ~= nil then
    text = variant.name .. ": ceiling " .. number(variant.ceiling) .. " " .. (variant.unit or "")
  else
    text = variant.name .. ": no level passed"
  end
  if variant.limitedBy ~= nil and variant.limitedBy ~= "unknown" then
    text = text .. ", limited by " .. variant.limitedBy
  end
  if variant.verdict == "baseline" then
    text = text .. " (baseline)"
  elseif variant.verdict ~= nil and variant.deltaPercent ~= nil then
    local sign = variant.deltaPercent >= 0 and "+" or ""
    text = text .. ", " .. sign .. string.format("%.1f", variant.deltaPercent) .. "% (" .. variant.verdict .. ")"
  end
  return text
end

local function describe_success(status)
  local parts = {}
  if status.variants ~= nil and #status.variants > 0 then
    for _, variant in ipairs(status.variants) do
      table.insert(parts, describe_variant(variant))
    end
  else
    local text = describe_ceiling(status.ceiling)
    if text ~= nil then
      table.insert(parts, text)
    end
  end
  if #parts > 0 then
    local text = "Succeeded: " .. table.concat(parts, "; ")
    if nonempty(status.change) then
      text = text .. " (" .. status.change .. " vs baseline)"
    end
    return text
  end
  local ready = condition(status, "Ready")
  if ready ~= nil and nonempty(ready.message) then
    return ready.message
  end
  return "Succeeded"
end

-- The reason a run failed: the first False condition that says why, in the
-- order a user acts on (a bad spec before a failed run), then status.message.
local function describe_failure(status)
  for _, wanted in ipairs({ "SpecValid", "Ready", "Provisioned", "Progressing" }) do
    local c = condition(status, wanted)
    if c ~= nil and c.status == "False" and nonempty(c.message) then
      return c.message
    end
  end
  if nonempty(status.message) then
    return status.message
  end
  return "the capacity test failed"
end

local function describe_progress(status)
  local c = condition(status, "Progressing")
  if c ~= nil and nonempty(c.message) then
    return c.message
  end
  if nonempty(status.message) then
    return status.message
  end
  return nil
end

local status = obj.status
if status == nil or status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Plimsoll operator to pick up the test"
  return hs
end

local generation = obj.metadata ~= nil and obj.metadata.generation or nil
if generation ~= nil and status.observedGeneration ~= nil
    and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. number(generation)
  return hs
end

local phase = status.phase
local regressed = condition(status, "Regressed")
local proved = condition(status, "Proved")
local flight = status.autoscaling

local function describe_flight(autoscaling)
  local text = nonempty(autoscaling.sentence) and autoscaling.sentence or autoscaling.verdict
  if autoscaling.recommendedHeld == true then
    text = text .. "; the recommended HPA held"
  elseif autoscaling.recommendedHeld == false then
    text = text .. "; the recommended HPA did not hold either"
  end
  return text
end
if phase == "Succeeded" and regressed ~= nil and regressed.status == "True" then
  hs.status = "Degraded"
  hs.message = "Regressed: " .. (nonempty(regressed.message) and regressed.message or "the ceiling fell below its baseline")
elseif phase == "Succeeded" and proved ~= nil and proved.status == "False" then
  hs.status = "Degraded"
  hs.message = "Not proved: " .. (nonempty(proved.message) and proved.message or "the deployment did not hold")
elseif phase == "Succeeded" and proved ~= nil and proved.status == "True" then
  hs.status = "Healthy"
  hs.message = "Proved: " .. (nonempty(proved.message) and proved.message or "the deployment held")
elseif phase == "Succeeded" and flight ~= nil and flight.held == false then
  hs.status = "Degraded"
  hs.message = "Flight did not hold: " .. describe_flight(flight)
elseif phase == "Succeeded" and flight ~= nil then
  hs.status = "Healthy"
  hs.message = "Flight held: " .. describe_flight(flight)
elseif phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = describe_success(status)
elseif phase == "Failed" then
  hs.status = "Degraded"
  hs.message = describe_failure(status)
elseif phase == "Pending" or phase == "Queued" or phase == "Provisioning" or phase == "Running" then
  hs.status = "Progressing"
  local progress = describe_progress(status)
  hs.message = progress ~= nil and (phase .. ": " .. progress) or phase
else
  hs.status = "Unknown"
  hs.message = "Unknown phase " .. tostring(phase)
end
return hs
