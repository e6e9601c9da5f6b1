# Installs memsvc on Windows: checks memsvc-windows-x64.exe against SHA256SUMS and
# puts it at $Prefix\memsvc.exe (default %LOCALAPPDATA%\memsvc\bin), adding that to the user's PATH.
#
#   powershell -ExecutionPolicy Bypass -File install.ps1                    the latest release from GitHub, or a checkout's built dist\
#   powershell -ExecutionPolicy Bypass -File install.ps1 -From <folder>     a folder holding memsvc-windows-x64.exe and SHA256SUMS
#   powershell -ExecutionPolicy Bypass -File install.ps1 -BaseUrl <URL>     another download location (a mirror, one pinned release)
#   from a checkout:   npm install; npm run build; powershell -ExecutionPolicy Bypass -File install.ps1
#   irm https://github.com/<repo>/releases/latest/download/install.ps1 | iex    the latest release, no file kept
#
# Environment twins: MEMSVC_DIST, MEMSVC_BASE_URL, MEMSVC_REPO (owner/name of the GitHub
# repository the latest release comes from). The twin of install.sh. Not run by the test
# suite: its CI machine has no PowerShell (test/unit/release-files.test.ts reads it instead).
param(
  [string]$BaseUrl = $env:MEMSVC_BASE_URL,
  [string]$From = $env:MEMSVC_DIST,
  [string]$Prefix = (Join-Path $env:LOCALAPPDATA "memsvc\bin")
)
# The GitHub repository releases are published from. "memsvc/memsvc" is an
# assumption until the project's public home is settled: change it here and in
# install.sh (one line each), or set MEMSVC_REPO=<owner>/<name>.
$Repo = if ($env:MEMSVC_REPO) { $env:MEMSVC_REPO } else { "memsvc/memsvc" }
$LatestUrl = "https://github.com/$Repo/releases/latest/download"

$ErrorActionPreference = "Stop"
# Windows PowerShell 5.1 redraws a progress bar per chunk (a download many times slower) and may not offer TLS 1.2, which GitHub requires.
$ProgressPreference = "SilentlyContinue"
[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12

$name = "memsvc-windows-x64.exe"

# Run as `irm .../install.ps1 | iex` the script runs inside the user's own
# session, where exit would close their window: there a failure throws instead.
$AsFile = [bool]$PSCommandPath
function Stop-Install {
  if ($AsFile) { exit 1 }
  throw "memsvc install failed"
}

function Fail([string]$Message) {
  [Console]::Error.WriteLine("memsvc install: $Message")
  Stop-Install
}

# After a failure: the three ways, so the next attempt can take another.
function Fail-WithWays([string]$Message) {
  [Console]::Error.WriteLine("memsvc install: $Message")
  [Console]::Error.WriteLine("Ways to install memsvc:")
  [Console]::Error.WriteLine("  install.ps1                   the latest release (needs github.com): $LatestUrl")
  [Console]::Error.WriteLine("  install.ps1 -From <folder>    a folder holding $name and SHA256SUMS (a release's files)")
  [Console]::Error.WriteLine("  from a checkout:              npm install; npm run build; then install.ps1")
  Stop-Install
}

# An explicit -From/-BaseUrl wins over the other source's environment twin.
if ($PSBoundParameters.ContainsKey("From")) { $BaseUrl = "" }
if ($PSBoundParameters.ContainsKey("BaseUrl")) { $From = "" }

# Where the binaries come from: an explicit -From/-BaseUrl; else this checkout's
# dist\ once `npm run build` has written SHA256SUMS there; else the latest
# release. Run as `irm ... | iex` there is no script folder, so no checkout.
if (-not $From -and -not $BaseUrl) {
  if ($PSScriptRoot -and (Test-Path (Join-Path $PSScriptRoot "dist\SHA256SUMS"))) {
    $From = Join-Path $PSScriptRoot "dist"
  } else {
    $BaseUrl = $LatestUrl
    if ($PSScriptRoot -and (Test-Path (Join-Path $PSScriptRoot "package.json"))) {
      Write-Host "memsvc install: $(Join-Path $PSScriptRoot 'dist') holds no build (npm install; npm run build makes one): taking the latest release"
    }
  }
}
# Windows on Arm runs x64 programs through its emulator; there is no arm64 build of memsvc for Windows.
if ($env:PROCESSOR_ARCHITECTURE -notin @("AMD64", "ARM64")) { Fail "no memsvc binary for $($env:PROCESSOR_ARCHITECTURE) CPUs" }

$source = if ($From) { $From } else { $BaseUrl }
Write-Host "memsvc install: $name from $source"
$tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("memsvc-" + [System.Guid]::NewGuid())
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
  foreach ($file in @("SHA256SUMS", $name)) {
    if ($From) {
      $path = Join-Path $From $file
      if (-not (Test-Path $path)) {
        if ($file -eq "SHA256SUMS") { Fail-WithWays "$path does not exist (in a checkout, ``npm run build`` writes dist\$name and dist\SHA256SUMS)" }
        Fail-WithWays "$path does not exist"
      }
      Copy-Item $path (Join-Path $tmp $file)
    } else {
      try {
        Invoke-WebRequest -UseBasicParsing -Uri "$BaseUrl/$file" -OutFile (Join-Path $tmp $file)
      } catch {
        Fail-WithWays "could not download $BaseUrl/$file ($($_.Exception.Message))"
      }
    }
  }

  $expected = $null
  foreach ($line in Get-Content (Join-Path $tmp "SHA256SUMS")) {
    $parts = $line -split "\s+", 2
    if ($parts.Count -eq 2 -and ($parts[1] -eq $name -or $parts[1] -eq "*$name")) { $expected = $parts[0].ToLower() }
  }
  if (-not $expected) { Fail "SHA256SUMS lists no $name" }
  $actual = (Get-FileHash -Algorithm SHA256 (Join-Path $tmp $name)).Hash.ToLower()
  if ($actual -ne $expected) { Fail "checksum mismatch for $name (expected $expected, got $actual): not installed" }

  $version = & (Join-Path $tmp $name) --version
  if ($LASTEXITCODE -ne 0) { Fail "$name does not run on this machine: not installed" }

  New-Item -ItemType Directory -Force -Path $Prefix | Out-Null
  $target = Join-Path $Prefix "memsvc.exe"
  Copy-Item (Join-Path $tmp $name) "$target.new" -Force
  Move-Item "$target.new" $target -Force
  Write-Host "memsvc install: installed memsvc $version at $target (sha256 $actual)"

  $userPath = [Environment]::GetEnvironmentVariable("Path", "User")
  if (-not (($userPath -split ";") -contains $Prefix)) {
    [Environment]::SetEnvironmentVariable("Path", "$userPath;$Prefix", "User")
    Write-Host "memsvc install: added $Prefix to your PATH (open a new terminal to use it)"
  }
} finally {
  Remove-Item -Recurse -Force $tmp -ErrorAction SilentlyContinue
}

Write-Host ""
Write-Host "Next:"
Write-Host "  memsvc setup    creates the service home, finds a language model, wires your agent"
Write-Host "                  harnesses, installs autostart and starts the server"
