;;; agent_shell_stub.el --- Loads examples/editors/emacs/agent-shell.el against stand-ins  -*- lexical-binding: t; -*-
;; The stand-ins have the keyword signatures of agent-shell's `agent-shell-make-agent-config' and acp.el's
;; `acp-make-client' (agent-shell v0.36-0.40, acp.el 0.9-0.11), so a misspelt or unknown keyword in the
;; example is an error here. It does not run agent-shell itself. Exit status 0 when every check holds.
(require 'cl-lib)
(defvar agent-shell-agent-configs nil)
(defvar stub-client-args nil)
(cl-defun agent-shell-make-agent-config (&key identifier mode-line-name welcome-function buffer-name
                                              shell-prompt shell-prompt-regexp client-maker
                                              needs-authentication authenticate-request-maker
                                              default-model-id default-session-mode-id icon-name
                                              install-instructions)
  (ignore welcome-function needs-authentication authenticate-request-maker default-model-id
          default-session-mode-id icon-name install-instructions)
  (list (cons :identifier identifier) (cons :mode-line-name mode-line-name) (cons :buffer-name buffer-name)
        (cons :shell-prompt shell-prompt) (cons :shell-prompt-regexp shell-prompt-regexp)
        (cons :client-maker client-maker)))
(cl-defun acp-make-client (&key context-buffer command command-params environment-variables
                                request-sender notification-sender request-resolver response-sender
                                outgoing-request-decorator)
  (ignore request-sender notification-sender request-resolver response-sender outgoing-request-decorator)
  (setq stub-client-args (list command command-params environment-variables context-buffer))
  'client)
(cl-defun agent-shell-start (&key config) config)
(provide 'agent-shell)

(setenv "AGENTD" "/opt/agentd/bin/agentd")
(load (expand-file-name (car command-line-args-left)) nil t)
(setq command-line-args-left nil)
(let* ((config (agentd-agent-shell-make-config))
       (client (funcall (alist-get :client-maker config) (current-buffer))))
  (cl-assert (eq (alist-get :identifier config) 'agentd))
  (cl-assert (string-match-p (alist-get :shell-prompt-regexp config) (alist-get :shell-prompt config)))
  (cl-assert (eq client 'client))
  (cl-assert (equal (car stub-client-args) "/opt/agentd/bin/agentd") nil "command: %S" stub-client-args)
  (cl-assert (eq (nth 3 stub-client-args) (current-buffer)))
  (cl-assert (= (length agent-shell-agent-configs) 1))
  (cl-assert (commandp 'agentd-agent-shell))
  (princ "agent-shell.el: config and client maker ok\n"))
