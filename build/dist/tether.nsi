; Tether's Windows installer (NSIS). The Makefile's `dist` target runs:
;   makensis -WX -NOCD -DVERSION=x.y.z -DEXE=bin/tether.exe -DOUTFILE=dist/tether-x.y.z-setup.exe build/dist/tether.nsi
; -WX: any warning fails the build.
;
; Per user, no administrator: the app goes to %LOCALAPPDATA%\Programs\Tether,
; the shortcut to the user's Start menu, the uninstall entry to HKCU. The
; uninstaller also removes the login item that Tether's tray writes
; (go-autostart: "tether.lnk" in the user's Startup folder). It leaves the
; config dir (%APPDATA%\tether): the README says how to remove it.
; The window needs the Microsoft Edge WebView2 Runtime (part of Windows 11
; and of updated Windows 10). The installer looks for it and, when it is
; missing, says so and offers Microsoft's download page; the tray and the
; command line work without it.
; Neither the installer nor tether.exe is signed: SmartScreen warns.

!ifndef VERSION
  !error "pass -DVERSION=x.y.z"
!endif
!ifndef EXE
  !error "pass -DEXE=path\to\tether.exe"
!endif
!ifndef OUTFILE
  !error "pass -DOUTFILE=path\to\setup.exe"
!endif

Unicode true
SetCompressor /SOLID lzma
Name "Tether"
OutFile "${OUTFILE}"
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\Tether"
InstallDirRegKey HKCU "Software\Tether" "InstallDir"
ShowInstDetails show
ShowUninstDetails show

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "Tether"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "Tether installer"
VIAddVersionKey "LegalCopyright" "the Tether maintainers"

!define UNINSTKEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Tether"
; The Evergreen WebView2 Runtime's client id (Microsoft's WebView2 docs).
!define WV2GUID "{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"
!define WV2URL "https://go.microsoft.com/fwlink/p/?LinkId=2124703"

!include "MUI2.nsh"
!insertmacro MUI_PAGE_WELCOME
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!define MUI_FINISHPAGE_RUN "$INSTDIR\tether.exe"
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; $0 is left non-empty when a WebView2 Runtime is installed (per machine,
; 64- or 32-bit view, or per user). "0.0.0.0" means removed.
Function DetectWebView2
  ReadRegStr $0 HKLM "SOFTWARE\WOW6432Node\Microsoft\EdgeUpdate\Clients\${WV2GUID}" "pv"
  StrCmp $0 "" 0 +2
  ReadRegStr $0 HKLM "SOFTWARE\Microsoft\EdgeUpdate\Clients\${WV2GUID}" "pv"
  StrCmp $0 "" 0 +2
  ReadRegStr $0 HKCU "Software\Microsoft\EdgeUpdate\Clients\${WV2GUID}" "pv"
  StrCmp $0 "0.0.0.0" 0 +2
  StrCpy $0 ""
FunctionEnd

Section "Tether" SecMain
  SetShellVarContext current
  SetOutPath "$INSTDIR"
  File "/oname=tether.exe" "${EXE}"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortCut "$SMPROGRAMS\Tether.lnk" "$INSTDIR\tether.exe" "" "$INSTDIR\tether.exe" 0 SW_SHOWMINIMIZED

  WriteRegStr HKCU "Software\Tether" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayName" "Tether"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTKEY}" "Publisher" "the Tether maintainers"
  WriteRegStr HKCU "${UNINSTKEY}" "DisplayIcon" "$INSTDIR\tether.exe"
  WriteRegStr HKCU "${UNINSTKEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTKEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTKEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTKEY}" "NoRepair" 1

  Call DetectWebView2
  StrCmp $0 "" 0 webview2_found
    DetailPrint "The Microsoft Edge WebView2 Runtime is not installed."
    MessageBox MB_YESNO|MB_ICONINFORMATION \
      "Tether's window needs the Microsoft Edge WebView2 Runtime, which is not installed on this PC.$\r$\n$\r$\nThe tray icon and the command line work without it. Install the Runtime from Microsoft (the 'Evergreen Bootstrapper'), then start Tether again.$\r$\n$\r$\nOpen Microsoft's download page now?" \
      /SD IDNO IDNO webview2_found
    ExecShell "open" "${WV2URL}"
  webview2_found:
SectionEnd

Section "Uninstall"
  SetShellVarContext current
  ; Stop a running Tether first (its daemon, tray and window), so its files can go.
  IfFileExists "$INSTDIR\tether.exe" 0 +3
    nsExec::Exec '"$INSTDIR\tether.exe" stop'
    Pop $0
  Delete "$SMPROGRAMS\Tether.lnk"
  ; The login item (tray: Start at login), written by go-autostart.
  Delete "$SMSTARTUP\tether.lnk"
  Delete "$INSTDIR\tether.exe"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTKEY}"
  DeleteRegKey HKCU "Software\Tether"
SectionEnd
