;;; agentd-agent-shell.el --- agentd as an agent-shell agent  -*- lexical-binding: t; -*-

;;; Commentary:
;; (Kept here as agent-shell.el; install it as agentd-agent-shell.el, see README.md.)
;; Adds agentd to agent-shell (https://github.com/xenodium/agent-shell), the Emacs ACP client.
;; agent-shell starts agentd and speaks ACP with it over stdio.  Load this file after agent-shell
;; (see README.md next to it), then run M-x agentd-agent-shell, or pick "agentd" in M-x agent-shell.
;; Written against agent-shell's `agent-shell-make-agent-config' with :identifier (v0.36 and later).

;;; Code:

(require 'agent-shell)

(defgroup agentd-agent-shell nil
  "agentd in agent-shell."
  :group 'agent-shell)

(defcustom agentd-agent-shell-command
  (list (or (getenv "AGENTD") (expand-file-name "~/src/agentd/build/default/daemon/agentd")))
  "The agentd command and its arguments, e.g. (\"/path/agentd\" \"--demo\")."
  :type '(repeat string)
  :group 'agentd-agent-shell)

(defcustom agentd-agent-shell-environment nil
  "Extra environment for agentd, as \"NAME=value\" strings.
agentd also inherits Emacs's environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, AGENTD_MODEL)."
  :type '(repeat string)
  :group 'agentd-agent-shell)

(defun agentd-agent-shell--make-client (buffer)
  "Make the ACP client that runs agentd, with BUFFER as its context."
  (let ((command (car agentd-agent-shell-command))
        (params (cdr agentd-agent-shell-command)))
    ;; agent-shell's own helper adds its container runner and request decorator when it has them.
    (if (fboundp 'agent-shell--make-acp-client)
        (agent-shell--make-acp-client :command command
                                      :command-params params
                                      :environment-variables agentd-agent-shell-environment
                                      :context-buffer buffer)
      (acp-make-client :command command
                       :command-params params
                       :environment-variables agentd-agent-shell-environment
                       :context-buffer buffer))))

(defun agentd-agent-shell-make-config ()
  "Return the agent-shell configuration for agentd."
  (agent-shell-make-agent-config
   :identifier 'agentd
   :mode-line-name "agentd"
   :buffer-name "agentd"
   :shell-prompt "agentd> "
   :shell-prompt-regexp "agentd> "
   :welcome-function (lambda (config) (shell-maker-welcome-message config))
   :client-maker (lambda (buffer) (agentd-agent-shell--make-client buffer))
   :install-instructions "Build agentd (scripts/build.sh) and set `agentd-agent-shell-command'."))

;;;###autoload
(defun agentd-agent-shell ()
  "Start an agent-shell talking to agentd."
  (interactive)
  (agent-shell-start :config (agentd-agent-shell-make-config)))

;; Also offer agentd in M-x agent-shell's agent list.
(add-to-list 'agent-shell-agent-configs (agentd-agent-shell-make-config) t)

(provide 'agentd-agent-shell)

;;; agentd-agent-shell.el ends here
