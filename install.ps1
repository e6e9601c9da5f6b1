# Installs memsvc on Windows: checks memsvc-windows-x64.exe against SHA256SUMS and
# puts it at $Prefix\memsvc.exe (default %LOCALAPPDATA%\memsvc\bin), adding that to the user's PATH.
#
#   powershell -ExecutionPolicy Bypass -File install.ps1 -BaseUrl <release URL>
#   powershell -ExecutionPolicy Bypass -File install.ps1 -From <folder>
#
# The twin of install.sh. Not run by the test suite: its CI machine has no PowerShell.
param(
  [string]$BaseUrl = $env:MEMSVC_BASE_URL,
  [string]$From = $env:MEMSVC_DIST,
  [string]$Prefix = (Join-Path $env:LOCALAPPDATA "memsvc\bin")
)
$ErrorActionPreference = "Stop"

function Fail([string]$Message) {
  Write-Error "memsvc install: $Message"
  exit 1
}

if (-not $From -and -not $BaseUrl) {
  $local = Join-Path $PSScriptRoot "dist"
  if (Test-Path (Join-Path $local "SHA256SUMS")) { $From = $local } else { Fail "say where the binaries are: -BaseUrl <URL> or -From <folder>" }
}
# Windows on Arm runs x64 programs through its emulator; there is no arm64 build of memsvc for Windows.
if ($env:PROCESSOR_ARCHITECTURE -notin @("AMD64", "ARM64")) { Fail "no memsvc binary for $($env:PROCESSOR_ARCHITECTURE) CPUs" }
$name = "memsvc-windows-x64.exe"

$tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("memsvc-" + [System.Guid]::NewGuid())
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
  foreach ($file in @("SHA256SUMS", $name)) {
    if ($From) {
      $source = Join-Path $From $file
      if (-not (Test-Path $source)) { Fail "$source does not exist" }
      Copy-Item $source (Join-Path $tmp $file)
    } else {
      Invoke-WebRequest -UseBasicParsing -Uri "$BaseUrl/$file" -OutFile (Join-Path $tmp $file)
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
Write-Host "  memsvc init            create the service home with its config and token"
Write-Host "  memsvc server          start the service (http://127.0.0.1:8787)"
Write-Host "  memsvc hooks install   connect Claude Code to it"
