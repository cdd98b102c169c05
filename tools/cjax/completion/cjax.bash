# Bash completion for the cjax CLI. Installed to share/bash-completion/completions/cjax; or
# `source tools/cjax/completion/cjax.bash` by hand. Example names come from `cjax examples`, a
# plugin's function names from `cjax examples --plugin LIB`.

_cjax() {
  local cur prev cmd i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local commands="examples jaxpr residuals fwd-bwd grad run lower bench memory comms"
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case " $commands " in *" ${COMP_WORDS[i]} "*) cmd=${COMP_WORDS[i]}; break ;; esac
  done
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "$commands --help --version --verbose" -- "$cur"))
    return
  fi

  local source_opts="--example -e --plugin -p --function -f --help"
  local autodiff_opts="$source_opts --arg-names --policy --names --offload-names --budget"
  local input_opts="--inputs --seed --int-high --int-range --out -o"
  case $prev in
    --example | -e)
      COMPREPLY=($(compgen -W "$(cjax examples 2>/dev/null | cut -d' ' -f1)" -- "$cur"))
      return ;;
    --function | -f)
      local lib=""
      for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == --plugin || ${COMP_WORDS[i]} == -p ]] && lib=${COMP_WORDS[i+1]}
      done
      [[ -n $lib ]] && COMPREPLY=($(compgen -W "$(cjax examples --plugin "$lib" 2>/dev/null |
        cut -d' ' -f1)" -- "$cur"))
      return ;;
    --plugin | -p) COMPREPLY=($(compgen -f -X '!*.so' -- "$cur") $(compgen -d -- "$cur")); return ;;
    --inputs) COMPREPLY=($(compgen -f -X '!*.npy' -- "$cur") $(compgen -d -- "$cur")); return ;;
    --out | -o) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --policy)
      COMPREPLY=($(compgen -W "everything_saveable nothing_saveable dots_saveable
        dots_with_no_batch_dims_saveable save_anything_except_these_names save_any_names_but_these
        save_only_these_names offload_dot_with_no_batch_dims save_and_offload_only_these_names" \
        -- "$cur"))
      return ;;
    --layout) COMPREPLY=($(compgen -W "auto columns stacked" -- "$cur")); return ;;
    --only) COMPREPLY=($(compgen -W "fwd bwd" -- "$cur")); return ;;
    --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    --backend) COMPREPLY=($(compgen -W "cpu interpreter cuda" -- "$cur")); return ;;
    --emit) COMPREPLY=($(compgen -W "mlir lowered llvm ptx plan" -- "$cur")); return ;;
    --target) COMPREPLY=($(compgen -W "cpu cuda" -- "$cur")); return ;;
  esac

  local opts
  case $cmd in
    examples) opts="--plugin -p --help" ;;
    jaxpr) opts="$source_opts --json --color" ;;
    residuals) opts="$autodiff_opts --per-process --bytes --json" ;;
    fwd-bwd) opts="$autodiff_opts --per-process --layout --only --compiled" ;;
    grad) opts="$autodiff_opts $input_opts --wrt --allow-int --backend" ;;
    run) opts="$source_opts $input_opts --backend" ;;
    lower) opts="$source_opts --target --emit --reference" ;;
    bench) opts="$autodiff_opts --wrt --repetitions -r --warmup --json --timing --step" ;;
    memory) opts="$source_opts --per-process --names --budgets --json --timing --plot" ;;
    comms) opts="$source_opts" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts --verbose" -- "$cur"))  # --verbose: the app's, after the command too
  else  # jaxpr files
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _cjax cjax
